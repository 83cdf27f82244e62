/**
 * Wire shapes of the generate endpoints and predictions: the request bodies real clients send (the
 * `vlmrun` SDKs and plain HTTP) and the one mapper from a Prediction record to its JSON.
 */
import { z } from 'zod';
import {
  STRUCTURED_MODEL_ALIASES,
  type Prediction,
  type PredictionKind,
  type PredictionRequest,
} from '../domain/prediction';
import type { GenerateCommand } from '../services/predictions/generate-command';
import { pagination } from './common.schemas';
import { agentSkillSchema, toSkillReference } from './skills.schemas';

/** Largest `video_max_frames` we sample; larger values are a 400 (spec: "video_max_frames too large"). */
export const MAX_VIDEO_FRAMES = 1024;

const generationConfigSchema = z
  .object({
    json_schema: z.record(z.string(), z.unknown()).nullish(),
    detail: z.enum(['auto', 'hi', 'lo']).default('auto'),
    confidence: z.boolean().default(false),
    grounding: z.boolean().default(false),
    gql_stmt: z.string().nullish(),
    document_dpi: z.number().int().min(36).max(600).nullish(),
    video_fps: z.number().positive().max(60).nullish(),
    video_max_frames: z.number().int().min(1).nullish(),
    page_indices: z.array(z.number().int().min(0)).nullish(),
    skills: z.array(agentSkillSchema).max(16).nullish(),
  })
  .loose();

/**
 * Generation settings sent at the top level of a generate body instead of inside `config` (`page_indices`, `detail`
 * …): the first one found, or null. Unknown keys are otherwise ignored, so these would be silently dropped (all
 * pages read) where the caller meant them.
 */
export function misplacedConfigField(body: unknown): string | null {
  if (!body || typeof body !== 'object') return null;
  const keys = [...Object.keys(generationConfigSchema.shape), 'service_tier'];
  return keys.find((key) => key !== 'skills' && key in body) ?? null;
}

const metadataSchema = z.record(z.string(), z.unknown()).nullish();

const commonFields = {
  model: z.string().min(1).default('prism-1'),
  domain: z.string().min(1).nullish(),
  config: generationConfigSchema.nullish(),
  metadata: metadataSchema,
  callback_url: z.string().min(1).nullish(),
  batch: z.boolean().optional(),
};

const inputFields = { file_id: z.string().min(1).nullish(), url: z.string().min(1).nullish() };

/**
 * Images come as `images` (what the SDKs send), `file_id` or `url`, as documents do; a body with none is the
 * service's 400 `missing_input` naming all three, not a 422 about `images` alone.
 */
export const imageGenerateBodySchema = z.object({
  ...commonFields,
  ...inputFields,
  images: z.array(z.string()).min(1).nullish(),
});

export const fileGenerateBodySchema = z.object({ ...commonFields, ...inputFields });

/** The schema endpoints run only the structured model: `prism-1`, or the id the SDKs send for it (`vlm-1`). */
const structuredModel = z.enum(['prism-1', ...Object.keys(STRUCTURED_MODEL_ALIASES)]).default('prism-1');

export const imageSchemaBodySchema = z.object({
  images: z.array(z.string()).min(1),
  model: structuredModel,
  callback_url: z.string().min(1).nullish(),
  id: z.string().nullish(),
  created_at: z.string().nullish(),
});

/** `/v1/document/schema`, as the VLM Run SDKs' `document.schema()` sends it: `{file_id}` or `{url}`. */
export const documentSchemaBodySchema = z.object({
  file_id: z.string().min(1).nullish(),
  url: z.string().min(1).nullish(),
  model: structuredModel,
  callback_url: z.string().min(1).nullish(),
  batch: z.boolean().optional(),
});

export const listPredictionsQuerySchema = pagination({ max: 1000, default: 10 });
export const predictionIdParamsSchema = z.object({ id: z.string().min(1).max(200) });

type GenerateBody = z.output<typeof fileGenerateBodySchema> & { images?: string[] | null | undefined };

/** Image generation answers synchronously unless asked; documents, audio and video default to batch (docs). */
const DEFAULT_BATCH: Record<PredictionKind, boolean> = {
  image: false,
  image_schema: false,
  document: true,
  audio: true,
  video: true,
};

export function toGenerateCommand(kind: PredictionKind, body: GenerateBody): GenerateCommand {
  const config = body.config ?? undefined;
  const request: PredictionRequest = {
    jsonSchema: config?.json_schema ?? null,
    detail: config?.detail ?? 'auto',
    confidence: config?.confidence ?? false,
    grounding: config?.grounding ?? false,
    gqlStmt: config?.gql_stmt ?? null,
    documentDpi: config?.document_dpi ?? null,
    videoFps: config?.video_fps ?? null,
    videoMaxFrames: config?.video_max_frames ?? null,
    pageIndices: config?.page_indices ?? null,
    metadata: body.metadata ?? {},
    batch: body.batch ?? DEFAULT_BATCH[kind],
  };
  return {
    kind,
    model: body.model,
    domain: body.domain ?? null,
    callbackUrl: body.callback_url ?? null,
    images: body.images ?? undefined,
    fileId: body.file_id ?? undefined,
    url: body.url ?? undefined,
    request,
    skills: (config?.skills ?? []).map((skill, i) => toSkillReference(skill, `config.skills.${i}`)),
  };
}

/** The Prediction record on the wire (PredictionResponse in the SDKs). */
export function toPredictionWire(p: Prediction) {
  return {
    id: p.id,
    object: 'prediction' as const,
    created_at: p.createdAt.toISOString(),
    completed_at: p.completedAt ? p.completedAt.toISOString() : null,
    status: p.status,
    model: p.model,
    domain: p.domain,
    response: p.response ?? null,
    usage: p.usage,
    metadata: p.request.metadata,
  };
}
