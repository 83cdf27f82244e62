/**
 * Structured extraction on an upstream VLM or LLM: when a generate request names a model from the catalogue that
 * lives on an OpenAI-compatible server, the input and the schema go there as a chat completion (the image itself
 * for models that read images, else the text the embedded engines read from it) and the JSON reply becomes the
 * prediction's response. Local model ids still run on the embedded engines.
 */
import { BadRequestError } from '../../domain/errors';
import type { ExtractionEngine, ExtractionJob, ExtractionOutput } from '../../engines/extraction-engine';
import type { ModelCatalogue } from '../catalogue/model-catalogue';
import type { CatalogueModel } from '../catalogue/model.types';
import type { UpstreamClient } from './upstream-client';

type Json = Record<string, unknown>;

const readsImages = (m: CatalogueModel): boolean => m.capabilities.supportedInputTypes.includes('image');

/** Upstream chat models that can serve extraction (any that reads text; images go as text when it cannot see). */
function extractionModels(catalogue: ModelCatalogue): CatalogueModel[] {
  return catalogue.list('chat').filter((m) => m.engine.kind === 'upstream');
}

function instructions(job: ExtractionJob): string {
  return [
    job.prompt ?? 'Extract the requested information from the input as accurately as possible.',
    'Answer with one JSON object that matches this JSON schema. Use null for anything the input does not show;',
    'never invent values.',
    JSON.stringify(job.schema ?? { type: 'object' }),
  ].join('\n');
}

function parseJsonReply(content: unknown, provider: string): Json {
  const text = typeof content === 'string' ? content.trim().replace(/^```(?:json)?\s*|\s*```$/g, '') : '';
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Json;
  } catch {
    // reported below
  }
  throw new BadRequestError(`[${provider}] the model did not answer with a JSON object.`, null, 'model');
}

export function createRoutedExtractionEngine(deps: {
  local: ExtractionEngine;
  catalogue: ModelCatalogue;
  upstream: UpstreamClient;
}): ExtractionEngine {
  const { local, catalogue } = deps;
  const upstreamIds = extractionModels(catalogue).flatMap((m) => [m.id, ...m.aliases]);

  async function runUpstream(job: ExtractionJob, model: CatalogueModel): Promise<ExtractionOutput> {
    const target = catalogue.upstreamTarget(model);
    if (!target) throw new BadRequestError(`'${model.id}' has no upstream server configured.`, null, 'model');
    const content: Json[] = [{ type: 'text', text: instructions(job) }];
    let elements = 1;
    let elementType: ExtractionOutput['elementType'] = 'image';
    if (job.input.family === 'image' && readsImages(model)) {
      const url = `data:${job.input.mimeType};base64,${job.input.bytes.toString('base64')}`;
      content.push({ type: 'image_url', image_url: { url } });
    } else {
      const read = await local.read(job.input, job.request);
      elements = read.elementsProcessed;
      elementType = read.elementType;
      const text = read.layout.pages
        .filter((p) => p.status === 'ok')
        .map((p) => `--- page ${p.index + 1} ---\n${p.lines.map((l) => l.text).join('\n')}`)
        .join('\n');
      content.push({ type: 'text', text: `The input, as read by OCR or its text layer:\n${text}` });
    }
    const responseFormat =
      model.capabilities.jsonSchema && job.schema
        ? { type: 'json_schema', json_schema: { name: 'extraction', schema: job.schema } }
        : { type: 'json_object' };
    const reply = await deps.upstream.chat(target, {
      model: target.model,
      messages: [{ role: 'user', content }],
      response_format: responseFormat,
      temperature: 0,
    });
    const choice = (reply.choices as Json[] | undefined)?.[0];
    const response = parseJsonReply((choice?.message as Json | undefined)?.content, target.provider);
    return { response, elementsProcessed: elements, elementType, credits: elements, message: `Served by ${model.id}.` };
  }

  return {
    models: [...local.models, ...upstreamIds],
    validateInput: (kind, input) => local.validateInput(kind, input),
    async run(job) {
      if (local.models.includes(job.model)) return local.run(job);
      const model = catalogue.resolveServing(job.model);
      if (job.kind === 'image_schema' || !job.schema) return local.run({ ...job, model: local.models[0] ?? job.model });
      return runUpstream(job, model);
    },
    read: (input, request) => local.read(input, request),
    fill: (layout, schema, options) => local.fill(layout, schema, options),
    close: () => local.close(),
  };
}
