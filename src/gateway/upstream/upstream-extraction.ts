/**
 * Structured extraction on an upstream VLM or LLM: when a generate request names a model from the catalogue that
 * lives on an OpenAI-compatible server, the input and the schema go there as a chat completion (the image itself
 * for models that read images, else the text the embedded engines read from it) and the JSON reply becomes the
 * prediction's response. Local model ids still run on the embedded engines.
 *
 * With an assisting model configured (`PRISM_EXTRACT_UPSTREAM_MODEL`, a model of the models file), `prism-1`'s
 * schema extraction of an image or a PDF asks that model too: the embedded engines read the input once, the model
 * gets the image (when it reads images) and that OCR text and fills the schema, and when it fails (an upstream error
 * or deadline, a reply that is not a JSON object matching the schema) the embedded extractor fills the schema from
 * the same reading. Either way the prediction says which one answered.
 */
import { BadRequestError } from '../../domain/errors';
import { checkAgainstSchema } from '../../lib/json-schema';
import type { Logger } from '../../lib/logger';
import type { DocumentLayout } from '../../engines/types';
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

/** The text the embedded engines read, page by page, as the model is given it. */
function layoutText(layout: DocumentLayout): string {
  const text = layout.pages
    .filter((p) => p.status === 'ok')
    .map((p) => `--- page ${p.index + 1} ---\n${p.lines.map((l) => l.text).join('\n')}`)
    .join('\n');
  return `The input, as read by OCR or its text layer:\n${text}`;
}

export interface RoutedExtractionDeps {
  local: ExtractionEngine;
  catalogue: ModelCatalogue;
  upstream: UpstreamClient;
  /** The models-file model that assists `prism-1`'s schema extraction; none: the embedded extractor alone. */
  assistModel?: string | undefined;
  logger?: Logger;
}

/** The assisting model, checked at start-up: it must be a model of the catalogue that runs on an upstream. */
function assistingModel(catalogue: ModelCatalogue, id: string | undefined): CatalogueModel | null {
  if (!id) return null;
  const model = catalogue.find(id);
  if (!model || model.engine.kind !== 'upstream') {
    throw new Error(`PRISM_EXTRACT_UPSTREAM_MODEL names '${id}', which is not an upstream model of the models file.`);
  }
  return model;
}

export function createRoutedExtractionEngine(deps: RoutedExtractionDeps): ExtractionEngine {
  const { local, catalogue } = deps;
  const upstreamIds = extractionModels(catalogue).flatMap((m) => [m.id, ...m.aliases]);
  const assist = assistingModel(catalogue, deps.assistModel);

  /** Asks `model` to fill the job's schema from `parts` (the image, the OCR text); the reply's JSON object. */
  async function ask(job: ExtractionJob, model: CatalogueModel, parts: Json[]): Promise<Json> {
    const target = catalogue.upstreamTarget(model);
    if (!target) throw new BadRequestError(`'${model.id}' has no upstream server configured.`, null, 'model');
    const responseFormat =
      model.capabilities.jsonSchema && job.schema
        ? { type: 'json_schema', json_schema: { name: 'extraction', schema: job.schema } }
        : { type: 'json_object' };
    const reply = await deps.upstream.chat(target, {
      model: target.model,
      messages: [{ role: 'user', content: [{ type: 'text', text: instructions(job) }, ...parts] }],
      response_format: responseFormat,
      temperature: 0,
    });
    const choice = (reply.choices as Json[] | undefined)?.[0];
    return parseJsonReply((choice?.message as Json | undefined)?.content, target.provider);
  }

  const imagePart = (job: ExtractionJob): Json => ({
    type: 'image_url',
    image_url: { url: `data:${job.input.mimeType};base64,${job.input.bytes.toString('base64')}` },
  });

  async function runUpstream(job: ExtractionJob, model: CatalogueModel): Promise<ExtractionOutput> {
    let elements = 1;
    let elementType: ExtractionOutput['elementType'] = 'image';
    let part: Json;
    // Audio is read on the transcription model, when there is one: its seconds are billed with the request.
    let heard: { speechSeconds?: number } = {};
    if (job.input.family === 'image' && readsImages(model)) part = imagePart(job);
    else {
      const read = await local.read(job.input, job.request);
      elements = read.elementsProcessed;
      elementType = read.elementType;
      part = { type: 'text', text: layoutText(read.layout) };
      if (read.speechSeconds) heard = { speechSeconds: read.speechSeconds };
    }
    const response = await ask(job, model, [part]);
    const message = `Served by ${model.id}.`;
    return { response, elementsProcessed: elements, elementType, credits: elements, message, ...heard };
  }

  /** Schema extraction of an image or a PDF, the kind `prism-1` hands its assisting model. */
  const assisted = (job: ExtractionJob): boolean =>
    !!job.schema &&
    job.kind !== 'image_schema' &&
    (job.input.family === 'image' || job.input.family === 'document') &&
    !(job.domain === 'document.markdown' && !job.request.jsonSchema);

  /** `prism-1` with its assisting model; the embedded extractor fills the schema when the model fails. */
  async function runAssisted(job: ExtractionJob, model: CatalogueModel): Promise<ExtractionOutput> {
    const schema = job.schema ?? { type: 'object' };
    const read = await local.read(job.input, job.request);
    const usage = {
      elementsProcessed: read.elementsProcessed,
      elementType: read.elementType,
      credits: read.elementsProcessed,
    };
    const notes = read.message ? [read.message] : [];
    let failure: string;
    try {
      const parts = job.input.family === 'image' && readsImages(model) ? [imagePart(job)] : [];
      const response = await ask(job, model, [...parts, { type: 'text', text: layoutText(read.layout) }]);
      const check = checkAgainstSchema(schema, response);
      if (check.valid) {
        return {
          ...usage,
          response,
          message: [...notes, `Fields filled by ${model.id} from the input and its OCR text.`].join(' '),
        };
      }
      failure = `its answer did not match the schema (${check.errors.slice(0, 3).join('; ')})`;
    } catch (error) {
      // The caller learns what kind of failure it was; the upstream's own words (addresses, bodies) go to the log only.
      failure = error instanceof BadRequestError ? 'its answer was not a JSON object' : 'the upstream call failed';
      deps.logger?.warn('assisting model call failed', {
        model: model.id,
        error: error instanceof Error ? error.message : String(error),
      });
    }
    const response = local.fill(read.layout, schema, {
      confidence: job.request.confidence,
      grounding: job.request.grounding,
    });
    const fallback = `${model.id} could not fill the schema (${failure}); the embedded extractor did.`;
    return { ...usage, response, message: [...notes, fallback].join(' ') };
  }

  return {
    models: [...local.models, ...upstreamIds],
    validateInput: (kind, input, domain) => local.validateInput(kind, input, domain),
    async run(job) {
      if (local.models.includes(job.model)) return assist && assisted(job) ? runAssisted(job, assist) : local.run(job);
      const model = catalogue.resolveServing(job.model);
      if (job.kind === 'image_schema' || !job.schema) return local.run({ ...job, model: local.models[0] ?? job.model });
      return runUpstream(job, model);
    },
    read: (input, request) => local.read(input, request),
    fill: (layout, schema, options) => local.fill(layout, schema, options),
    close: () => local.close(),
  };
}
