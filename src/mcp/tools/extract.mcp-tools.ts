/**
 * Extraction tools: one per input kind, each the MCP face of `POST /v1/{kind}/generate`. The caller names a hub
 * domain or sends a JSON schema; the input is a URL, a stored file id, or base64 (or a data URL) in the arguments.
 * Calls wait for the result by default (with page and frame progress); `batch: true` returns the enqueued
 * prediction at once, to poll with `get_prediction`. A waiting call the client cancels stops its work (no further
 * page or frame is read) and its prediction ends `failed`, saying so, billed nothing.
 */
import { z } from 'zod';
import type { Prediction, PredictionKind } from '../../domain/prediction';
import { MAX_VIDEO_FRAMES, toGenerateCommand, toPredictionWire } from '../../wire/predictions.schemas';
import type { PredictionsService } from '../../services/predictions/predictions.types';
import { BadRequestError } from '../../domain/errors';
import { withToolParams } from '../mcp-errors';
import { PATH_DESCRIPTION, type LocalFiles } from '../mcp-local-files';
import { defineMcpTool, type McpTool } from '../mcp-tool';
import { predictionOutput } from './mcp-schemas';

/** The REST body as the output schema types it (usage as a plain object). */
function predictionResult(prediction: Prediction) {
  const wire = toPredictionWire(prediction);
  return { ...wire, usage: { ...wire.usage } };
}

type GenerateKind = Exclude<PredictionKind, 'image_schema'>;

const NOUN: Record<GenerateKind, string> = {
  image: 'an image',
  document: 'a document (PDF or scans)',
  video: 'a video',
  audio: 'an audio recording',
};

/** Where the bytes are: the one argument group every extract tool shares (errors name these, not REST fields). */
export const SOURCE_PARAMS = { images: 'data', 'images.0': 'data' } as const;

function inputSchema(kind: GenerateKind, local: boolean) {
  const base = z.object({
    domain: z.string().min(1).optional().describe('Hub domain, e.g. document.invoice'),
    json_schema: z.record(z.string(), z.unknown()).optional().describe('Or a JSON schema to fill'),
    url: z.string().min(1).optional().describe(`http(s) URL of ${NOUN[kind]}`),
    file_id: z.string().min(1).optional().describe('File id (a UUID) from upload_file'),
    data: z.string().min(1).optional().describe('Base64 bytes or a data: URL'),
    model: z.string().min(1).default('prism-1'),
    confidence: z.boolean().default(false).describe('Add <field>_metadata.confidence'),
    grounding: z.boolean().default(false).describe('Add <field>_metadata.bbox'),
    metadata: z.record(z.string(), z.unknown()).optional(),
    batch: z.boolean().default(false).describe('Return at once; poll get_prediction'),
  });
  const withPath = local ? base.extend({ path: z.string().min(1).optional().describe(PATH_DESCRIPTION) }) : base;
  if (kind === 'document') {
    return withPath.extend({ page_indices: z.array(z.number().int().min(0)).optional().describe('Only these pages') });
  }
  if (kind === 'video') {
    return withPath.extend({ video_max_frames: z.number().int().min(1).max(MAX_VIDEO_FRAMES).optional() });
  }
  return withPath;
}

function extractTool(kind: GenerateKind, predictions: PredictionsService, local: LocalFiles | undefined): McpTool {
  return defineMcpTool({
    name: `extract_${kind}`,
    title: `Extract JSON from ${NOUN[kind]}`,
    description:
      `Extracts JSON from ${NOUN[kind]} by hub domain or JSON schema given one of ` +
      'url, file_id or data. Returns the Prediction (response is the JSON).',
    input: inputSchema(kind, local !== undefined),
    output: predictionOutput,
    // Writes a prediction record; a repeat creates another one. URLs reach outside Prism.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    needsAccount: true,
    async run(args, ctx) {
      // Documents take page_indices and videos video_max_frames; the other kinds have neither.
      const perKind = args as { page_indices?: number[]; video_max_frames?: number; path?: string };
      const data = await dataOf(args.data, perKind.path, local);
      const command = toGenerateCommand(kind, {
        model: args.model,
        domain: args.domain ?? null,
        config: {
          json_schema: args.json_schema ?? null,
          detail: 'auto',
          confidence: args.confidence,
          grounding: args.grounding,
          page_indices: perKind.page_indices ?? null,
          video_max_frames: perKind.video_max_frames ?? null,
        },
        metadata: args.metadata ?? null,
        callback_url: null,
        batch: args.batch,
        file_id: args.file_id ?? null,
        url: args.url ?? null,
        ...(data === undefined ? {} : { images: [data] }),
      });
      const prediction = await withToolParams(SOURCE_PARAMS, () =>
        predictions.create(ctx.principal, command, {
          onProgress: (done, total) => ctx.progress(done, total, `${done} of ${total}`),
          signal: ctx.signal,
        }),
      );
      return predictionResult(prediction);
    },
  });
}

/** `local` (prism mcp only) adds `path`, a file on this machine, to each tool. */
export function extractTools(predictions: PredictionsService, local?: LocalFiles): McpTool[] {
  return (['image', 'document', 'video', 'audio'] as const).map((kind) => extractTool(kind, predictions, local));
}

/** The base64 the generate command carries: `data` as given, or the bytes of a local `path`. */
async function dataOf(
  data: string | undefined,
  path: string | undefined,
  local: LocalFiles | undefined,
): Promise<string | undefined> {
  if (path === undefined || !local) return data;
  if (data !== undefined) {
    throw new BadRequestError(
      'Send one input: `data`, `path`, `file_id` or `url`, not several.',
      'too_many_inputs',
      'path',
    );
  }
  return (await local.read(path)).bytes.toString('base64');
}

export function predictionTools(predictions: PredictionsService): McpTool[] {
  return [
    defineMcpTool({
      name: 'get_prediction',
      title: 'Get a prediction',
      description: 'A Prediction by id; polls batch extractions.',
      input: z.object({ id: z.string().min(1).max(200) }),
      output: predictionOutput,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      needsAccount: true,
      run: async (args, ctx) => predictionResult(await predictions.get(ctx.principal, args.id)),
    }),
  ];
}
