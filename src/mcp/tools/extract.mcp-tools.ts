/**
 * Extraction tools: one per input kind, each the MCP face of `POST /v1/{kind}/generate`. The caller names a hub
 * domain or sends a JSON schema; the input is a URL, a stored file id, or base64 (or a data URL) in the arguments.
 * Calls wait for the result by default (with page and frame progress); `batch: true` returns the enqueued
 * prediction at once, to poll with `get_prediction`. A waiting call the client cancels stops its work (no further
 * page or frame is read) and its prediction ends `failed`, saying so, billed nothing.
 */
import { z } from 'zod';
import type { PredictionKind } from '../../domain/prediction';
import { MAX_VIDEO_FRAMES, toGenerateCommand, toPredictionWire } from '../../wire/predictions.schemas';
import type { PredictionsService } from '../../services/predictions/predictions.types';
import { defineMcpTool, type McpTool } from '../mcp-tool';
import { predictionOutput } from './mcp-schemas';

type GenerateKind = Exclude<PredictionKind, 'image_schema'>;

const NOUN: Record<GenerateKind, string> = {
  image: 'an image',
  document: 'a document (PDF or scanned pages)',
  video: 'a video',
  audio: 'an audio recording',
};

function inputSchema(kind: GenerateKind) {
  return z.object({
    domain: z
      .string()
      .min(1)
      .optional()
      .describe('Hub domain to extract, e.g. document.invoice (list_hub_domains lists them)'),
    json_schema: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('A JSON schema to fill instead of (or refining) the domain schema'),
    url: z.string().min(1).optional().describe(`http(s) URL of ${NOUN[kind]}`),
    file_id: z.string().min(1).optional().describe('Id of a file stored with upload_file'),
    data: z.string().min(1).optional().describe('The bytes as base64 or a data: URL'),
    model: z.string().min(1).default('prism-1'),
    confidence: z.boolean().default(false).describe('Add <field>_metadata.confidence beside each field'),
    grounding: z.boolean().default(false).describe('Add <field>_metadata.bbox beside each field'),
    page_indices: z.array(z.number().int().min(0)).optional().describe('Only these pages (documents)'),
    video_max_frames: z.number().int().min(1).max(MAX_VIDEO_FRAMES).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    batch: z
      .boolean()
      .default(false)
      .describe('Return at once with status enqueued and poll get_prediction, instead of waiting'),
  });
}

function extractTool(kind: GenerateKind, predictions: PredictionsService): McpTool {
  return defineMcpTool({
    name: `extract_${kind}`,
    title: `Extract structured JSON from ${NOUN[kind]}`,
    description:
      `Extracts JSON from ${NOUN[kind]} by hub domain or JSON schema, as POST /v1/${kind}/generate does. ` +
      'Give exactly one of url, file_id or data. Returns the Prediction (response holds the JSON).',
    input: inputSchema(kind),
    output: predictionOutput,
    // Writes a prediction record; a repeat creates another one. URLs reach outside Prism.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    needsAccount: true,
    async run(args, ctx) {
      const command = toGenerateCommand(kind, {
        model: args.model,
        domain: args.domain ?? null,
        config: {
          json_schema: args.json_schema ?? null,
          detail: 'auto',
          confidence: args.confidence,
          grounding: args.grounding,
          page_indices: args.page_indices ?? null,
          video_max_frames: args.video_max_frames ?? null,
        },
        metadata: args.metadata ?? null,
        callback_url: null,
        batch: args.batch,
        file_id: args.file_id ?? null,
        url: args.url ?? null,
        ...(args.data === undefined ? {} : { images: [args.data] }),
      });
      const prediction = await predictions.create(ctx.principal, command, {
        onProgress: (done, total) => ctx.progress(done, total, `${done} of ${total}`),
        signal: ctx.signal,
      });
      return toPredictionWire(prediction);
    },
  });
}

export function extractTools(predictions: PredictionsService): McpTool[] {
  return (['image', 'document', 'video', 'audio'] as const).map((kind) => extractTool(kind, predictions));
}

export function predictionTools(predictions: PredictionsService): McpTool[] {
  return [
    defineMcpTool({
      name: 'get_prediction',
      title: 'Get a prediction',
      description: 'The Prediction with this id, as GET /v1/predictions/{id} returns it (poll batch extractions).',
      input: z.object({ id: z.string().min(1).max(200) }),
      output: predictionOutput,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      needsAccount: true,
      run: async (args, ctx) => toPredictionWire(await predictions.get(ctx.principal, args.id)),
    }),
  ];
}
