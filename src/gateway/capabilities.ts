/**
 * Capability checks: refuse, with 400 `capability_violation`, what a model cannot do, before any work starts.
 *
 * Only what the caller actually sent is checked (spec Errors rule 1): a key that is absent or `null` is not
 * "sent", and gateway defaults are never checked. `param` names the offending parameter, or for content the path
 * `messages.content.<part type>` (`input.<part type>` for embeddings). Unsupported parameters are refused, never
 * silently dropped. `response_format` of `json_object` works on every chat model; `json_schema` only where the
 * engine can enforce it.
 */
import { SchemaInvalidError } from '../domain/errors';
import { schemaProblem } from '../lib/json-schema';
import { CapabilityViolationError, TooManyInputsError } from './gateway-errors';
import type { CatalogueModel, InputType } from './catalogue/model.types';

/** Content part `type` → the input type it needs (OpenAI chat, Responses-style and the spec's own part names). */
export const PART_INPUT_TYPES: Readonly<Record<string, InputType>> = {
  text: 'text',
  refusal: 'text',
  input_text: 'text',
  image_url: 'image',
  input_image: 'image',
  video_url: 'video',
  audio_url: 'audio',
  input_audio: 'audio',
  document_url: 'document',
  file_url: 'document',
  input_file: 'document',
  file: 'document',
};

/** Keys every chat request has; not subject to `supported_parameters`. */
const CHAT_CORE = new Set(['model', 'messages']);
/** Keys every embeddings request has. */
const EMBEDDING_CORE = new Set(['model', 'input']);

/** A request body as the caller sent it (parsed JSON, before defaults). */
export type SentBody = Readonly<Record<string, unknown>>;

/**
 * Check a chat completion request against the model.
 * @throws AppError 400 `capability_violation` (or `too_many_inputs` for a second input to a structured model).
 */
export function checkChatCapabilities(model: CatalogueModel, body: SentBody): void {
  if (model.mode !== 'chat') {
    const route = model.mode === 'embedding' ? 'embeddings' : 'audio/transcriptions';
    throw new CapabilityViolationError(
      `'${model.id}' is a ${model.mode} model; call /v1/compat/${route} with it`,
      'model',
    );
  }
  for (const key of sentKeys(body)) {
    if (CHAT_CORE.has(key)) continue;
    if (key === 'response_format') checkResponseFormat(model, body.response_format);
    else if (!model.supportedParameters.includes(key)) throw unsupportedParameter(model, key);
  }
  const method = body.method;
  if (typeof method === 'string' && !model.capabilities.methods.includes(method)) {
    throw new CapabilityViolationError(
      `'${model.id}' has no method '${method}'; its methods are: ${model.capabilities.methods.join(', ') || 'none'}`,
      'method',
    );
  }
  checkContent(model, messageParts(body.messages), 'messages.content');
}

/**
 * Check an embeddings request against the model.
 * @throws AppError 400 `capability_violation`.
 */
export function checkEmbeddingCapabilities(model: CatalogueModel, body: SentBody): void {
  if (model.mode !== 'embedding') {
    throw new CapabilityViolationError(`'${model.id}' is not an embedding model; see GET /v1/compat/models`, 'model');
  }
  for (const key of sentKeys(body)) {
    if (!EMBEDDING_CORE.has(key) && !model.supportedParameters.includes(key)) throw unsupportedParameter(model, key);
  }
  const { dimensions } = model.capabilities;
  const asked = body.dimensions;
  if (asked != null && dimensions.length > 0 && !dimensions.includes(asked as number)) {
    throw new CapabilityViolationError(
      `'${model.id}' returns vectors of ${dimensions.join(', ')} values; dimensions=${JSON.stringify(asked)} is not one of them`,
      'dimensions',
    );
  }
  checkContent(model, inputParts(body.input), 'input');
}

function sentKeys(body: SentBody): string[] {
  return Object.keys(body).filter((k) => body[k] !== undefined && body[k] !== null);
}

function unsupportedParameter(model: CatalogueModel, key: string) {
  return new CapabilityViolationError(`'${model.id}' does not support the parameter '${key}'`, key);
}

function checkResponseFormat(model: CatalogueModel, format: unknown): void {
  const type = typeof format === 'object' && format !== null ? (format as { type?: unknown }).type : undefined;
  if (type === 'json_schema' && !model.capabilities.jsonSchema) {
    throw new CapabilityViolationError(
      `'${model.id}' cannot enforce a JSON schema; use response_format {"type": "json_object"} or another model`,
      'response_format',
    );
  }
  if (type === 'json_schema') {
    // Refused the same way as config.json_schema on the other routes, whichever engine serves the model.
    const f = format as { json_schema?: { schema?: unknown }; schema?: unknown };
    const schema = f.json_schema?.schema ?? f.schema;
    const problem = schema === undefined || schema === null ? null : schemaProblem(schema);
    if (problem) throw new SchemaInvalidError('response_format', problem);
  }
}

/** The `type` of every content part across all messages (a string content counts as text). */
function messageParts(messages: unknown): string[] {
  if (!Array.isArray(messages)) return [];
  const types: string[] = [];
  for (const message of messages) {
    const content = (message as { content?: unknown } | null)?.content;
    if (Array.isArray(content)) types.push(...content.map(partType));
  }
  return types;
}

/** Part types in an embeddings `input`: strings and token ids are text; objects are parts; nesting up to two deep. */
function inputParts(input: unknown, depth = 0): string[] {
  if (Array.isArray(input) && depth < 2) return input.flatMap((item) => inputParts(item, depth + 1));
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) return [partType(input)];
  return [];
}

function partType(part: unknown): string {
  const type = typeof part === 'object' && part !== null ? (part as { type?: unknown }).type : undefined;
  return typeof type === 'string' ? type : 'unknown';
}

function checkContent(model: CatalogueModel, types: string[], path: string): void {
  const { supportedInputTypes, maxImages, maxMediaInputs } = model.capabilities;
  let images = 0;
  let media = 0;
  for (const type of types) {
    const needs = PART_INPUT_TYPES[type];
    if (needs === undefined) {
      throw new CapabilityViolationError(`Unknown content part type '${type}'`, `${path}.${type}`);
    }
    if (!supportedInputTypes.includes(needs)) {
      throw new CapabilityViolationError(
        `'${model.id}' does not accept ${needs} input (${type}); it accepts: ${supportedInputTypes.join(', ')}`,
        `${path}.${type}`,
      );
    }
    if (needs === 'image') images += 1;
    if (needs !== 'text') media += 1;
  }
  if (maxImages !== null && images > maxImages) {
    const first = types.find((t) => PART_INPUT_TYPES[t] === 'image') ?? 'image_url';
    throw new CapabilityViolationError(
      `'${model.id}' takes at most ${maxImages} image${maxImages === 1 ? '' : 's'} per request; ${images} were sent`,
      `${path}.${first}`,
    );
  }
  if (maxMediaInputs !== null && media > maxMediaInputs) {
    const second = types.filter((t) => PART_INPUT_TYPES[t] !== 'text')[maxMediaInputs] ?? 'image_url';
    throw new TooManyInputsError(model.id, maxMediaInputs, `${path}.${second}`);
  }
}
