/**
 * Embeddings through the gateway: resolve the model, check what the caller sent against it, turn every `input`
 * form of the spec (a string, strings, token ids, content parts, lists of those) into engine inputs (fetching
 * media through the same guarded resolver as everywhere else), run the local embedder or the upstream, and answer
 * in the OpenAI shape with `float` or little-endian float32 `base64` vectors.
 *
 * A model with a prompt price is billed like a chat call: the input's estimated tokens are held (the key's budget,
 * the organisation's, then the wallet: `withKeyBudgets`) before any work, and the tokens embedded are settled after,
 * so `usage.cost` is what was debited. The bundled models are free, and bill nothing.
 */
import type { Principal } from '../../domain/account';
import { BadRequestError } from '../../domain/errors';
import {
  toBase64Float32,
  type EmbeddingInput,
  type EmbeddingPart,
  type TextEmbeddingEngine,
} from '../../engines/embeddings';
import { resolveSingleInput, type InputResolverDeps } from '../../services/inputs/resolve-input';
import { microsToDollars, priceCall, type Biller, type ModelPricing } from '../../metering/billing';
import { payerOf } from '../../metering/payer';
import { countTokens } from '../message-inputs';
import type { CatalogueModel } from '../catalogue/model.types';
import { randomHex } from '../../lib/random-id';
import { checkEmbeddingCapabilities } from '../capabilities';
import { checkKeyModelOf, type KeyModelCheck } from '../../services/admin/key-model-check';
import type { ModelCatalogue } from '../catalogue/model-catalogue';
import type { UpstreamClient } from '../upstream/upstream-client';
import type { CancelSignal } from '../../lib/cancel';
import { extend } from '../../lib/extend';

type Json = Record<string, unknown>;

/** The slice of a local embedding engine the gateway uses (the engines live in src/engines/embeddings). */
export type LocalEmbedder = Pick<TextEmbeddingEngine, 'embed'>;

export interface EmbeddingsServiceDeps {
  catalogue: ModelCatalogue;
  upstream: UpstreamClient;
  /** Local engines by the engine name the catalogue gives. */
  embedders: Readonly<Record<string, LocalEmbedder>>;
  inputs: InputResolverDeps;
  /** A key's allow-list of models (docs/admin.md). */
  checkKeyModel?: KeyModelCheck;
  /** Bills priced models (with the keys' and organisations' budgets); without it nothing is billed. */
  biller?: Biller;
}

export interface EmbeddingsService {
  embed(principal: Principal, body: Json, signal: CancelSignal): Promise<Json>;
}

const PART_KIND: Record<string, 'image' | 'video' | 'document' | 'audio'> = {
  image_url: 'image',
  video_url: 'video',
  audio_url: 'audio',
  input_audio: 'audio',
  document_url: 'document',
};

const isPart = (v: unknown): v is Json =>
  Boolean(v) && typeof v === 'object' && !Array.isArray(v) && 'type' in (v as Json);
const isTokenIds = (v: unknown): v is number[] =>
  Array.isArray(v) && v.length > 0 && v.every((x) => Number.isInteger(x));

/** Splits `input` into one entry per output vector (the spec's forms, including mixed arrays). */
function splitInputs(input: unknown): unknown[] {
  if (typeof input === 'string' || isTokenIds(input) || isPart(input)) return [input];
  if (!Array.isArray(input) || input.length === 0) {
    throw new BadRequestError(
      '`input` must be a string, token ids, content parts, or a non-empty list of those.',
      null,
      'input',
    );
  }
  if (input.every(isPart)) return [input];
  return input;
}

/** Prompt tokens a media part is assumed to count for before it is embedded (as an image counts in chat). */
const PART_TOKENS = 85;

/** The tokens `input` is assumed to count for before it is embedded: what is held for a priced model. */
function estimatedTokens(input: unknown): number {
  if (typeof input === 'string') return countTokens(input);
  if (isTokenIds(input)) return input.length;
  if (isPart(input)) return typeof input.text === 'string' ? countTokens(input.text) : PART_TOKENS;
  return Array.isArray(input) ? input.reduce<number>((sum, item) => sum + estimatedTokens(item), 0) : 0;
}

const isPriced = (pricing: ModelPricing): boolean => (pricing.prompt ?? 0) > 0;

export function createEmbeddingsService(deps: EmbeddingsServiceDeps): EmbeddingsService {
  /** `path` is where the part sits in the body as the caller sent it (`input`, `input.2`, `input.2.1`). */
  async function partOf(principal: Principal, part: Json, path: string): Promise<EmbeddingPart> {
    if (part.type === 'text' && typeof part.text === 'string') return { type: 'text', text: part.text };
    const kind = PART_KIND[String(part.type)];
    const value = part[String(part.type)];
    const url =
      typeof value === 'string'
        ? value
        : value && typeof value === 'object'
          ? ((value as Json).url ?? (value as Json).data)
          : undefined;
    if (!kind || typeof url !== 'string') {
      throw new BadRequestError(`${path}: unsupported or empty content part '${String(part.type)}'.`, null, path);
    }
    // A refused or unreadable URL names the field that carried it, e.g. `input.1.image_url`.
    const param = `${path}.${String(part.type)}`;
    const resolved = await resolveSingleInput(deps.inputs, principal, { images: [url] }, param);
    return { type: kind, data: resolved.bytes };
  }

  /** `path` is the item's place in the body: `input` when the body's input is that one item, else `input.<i>`. */
  async function toLocal(principal: Principal, item: unknown, path: string): Promise<EmbeddingInput> {
    if (typeof item === 'string' || isTokenIds(item)) return item;
    if (isPart(item)) return [await partOf(principal, item, path)];
    if (!Array.isArray(item) || !item.every(isPart)) {
      throw new BadRequestError(`${path} is not a string, token ids or content parts.`, null, path);
    }
    return Promise.all(item.map((p, j) => partOf(principal, p, `${path}.${j}`)));
  }

  /** Holds the input's estimated cost, embeds, and settles the tokens embedded (`usage.cost` then says so). */
  async function billed(
    biller: Biller,
    principal: Principal,
    model: CatalogueModel,
    body: Json,
    run: () => Promise<Json>,
  ) {
    const estimate = { promptTokens: estimatedTokens(body.input), completionTokens: 0 };
    const hold = await biller.reserve(
      payerOf(principal),
      priceCall(model.pricing, estimate, { minimumMicros: 0 }).costMicros,
    );
    let reply: Json;
    try {
      reply = await run();
    } catch (error) {
      hold.release();
      throw error;
    }
    const usage = (reply.usage ?? {}) as Json;
    const promptTokens = typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : 0;
    const charged = await hold.settle({
      pricing: model.pricing,
      usage: { promptTokens, completionTokens: 0 },
      reason: `embeddings ${model.id} ${typeof reply.id === 'string' ? reply.id : ''}`.trim(),
      minimumMicros: 0,
    });
    return extend(reply, { usage: extend(usage, { cost: microsToDollars(charged.costMicros) }) });
  }

  return {
    async embed(principal, body, signal) {
      await checkKeyModelOf(deps.checkKeyModel, principal, String(body.model));
      const model = deps.catalogue.resolveServing(String(body.model));
      checkEmbeddingCapabilities(model, body);
      const run = () => embedOn(principal, model, body, signal);
      return deps.biller && isPriced(model.pricing) ? billed(deps.biller, principal, model, body, run) : run();
    },
  };

  /** Embeds on the upstream or the local engine and answers in the OpenAI shape. */
  async function embedOn(principal: Principal, model: CatalogueModel, body: Json, signal: CancelSignal): Promise<Json> {
    const format = body.encoding_format === 'base64' ? 'base64' : 'float';
    const target = deps.catalogue.upstreamTarget(model);
    if (target) {
      const reply = await deps.upstream.embeddings(target, extend(body, { model: target.model }), { signal });
      return extend(reply, { model: model.id, served_model_id: model.id, backend: deps.catalogue.provider(model) });
    }
    const engineName = model.engine.kind === 'local' ? model.engine.name : '';
    const embedder = deps.embedders[engineName];
    if (!embedder) throw new BadRequestError(`'${model.id}' has no local embedding engine here.`, null, 'model');
    const items = splitInputs(body.input);
    const single = !Array.isArray(body.input) || items[0] === body.input;
    const inputs = await Promise.all(items.map((item, i) => toLocal(principal, item, single ? 'input' : `input.${i}`)));
    const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
    const batch = await embedder.embed(inputs, {
      ...(typeof body.dimensions === 'number' ? { dimensions: body.dimensions } : {}),
      promptName: typeof body.prompt_name === 'string' ? body.prompt_name : null,
      truncatePromptTokens: num(body.truncate_prompt_tokens),
      documentPages: Array.isArray(body.document_pages) ? (body.document_pages as (number | [number, number])[]) : null,
      documentMaxPages: num(body.document_max_pages),
    });
    const modalities = new Set(
      inputs.flatMap((input) =>
        typeof input === 'string' || isTokenIds(input) ? ['text'] : (input as EmbeddingPart[]).map((p) => p.type),
      ),
    );
    const modality = modalities.size === 1 ? [...modalities][0] : 'multimodal';
    const cost = priceCall(
      model.pricing,
      { promptTokens: batch.promptTokens, completionTokens: 0 },
      { minimumMicros: 0 },
    );
    return {
      id: `emb-${randomHex(12)}`,
      object: 'list',
      created: Math.floor(Date.now() / 1000),
      model: `${model.id}:${modality}`,
      served_model_id: model.id,
      backend: 'prism-local',
      data: batch.vectors.map((vector, index) => ({
        object: 'embedding',
        index,
        embedding: format === 'base64' ? toBase64Float32(vector) : Array.from(vector),
      })),
      usage: {
        prompt_tokens: batch.promptTokens,
        total_tokens: batch.promptTokens,
        cost: microsToDollars(cost.costMicros),
      },
    };
  }
}
