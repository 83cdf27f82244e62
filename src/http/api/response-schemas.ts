/**
 * What the API answers, as zod schemas: the success bodies the route declarations name, so a client generated from
 * `/openapi.json` gets typed replies. They describe what src/wire's `to…Wire` functions write; objects are loose
 * (a field added later does not break an old client) and every field a client reads is listed with its type. Tests
 * check real answers against them (test/integration/openapi-examples.test.ts and the generated client's round).
 */
import { z } from 'zod';
import { STATUSES } from '../../domain/prediction';

const iso = z.string().describe('ISO-8601 time');
const status = z.enum(STATUSES);
const anyObject = z.record(z.string(), z.unknown());

export const healthSchema = z.object({ status: z.literal('ok'), version: z.string(), spec_version: z.string() });

export const readySchema = z.object({
  status: z.enum(['ready', 'not_ready']),
  checks: z.object({ storage: z.enum(['ok', 'unreachable']), models: z.enum(['ok', 'none loaded']) }),
});

/** FileResponse; `created_at` is ISO-8601 on the main API and unix seconds on the gateway. */
export const fileSchema = z.looseObject({
  id: z.string(),
  object: z.literal('file'),
  filename: z.string(),
  bytes: z.number().int(),
  purpose: z.string(),
  created_at: z.union([iso, z.number().int()]),
  status: z.enum(['processed', 'pending']),
  md5: z.string().nullable(),
  content_type: z.string(),
  public_url: z.string().nullable(),
});
export const deletedFileSchema = fileSchema.extend({ deleted: z.literal(true) });
export const fileListSchema = z.array(fileSchema);
export const filePageSchema = z.looseObject({
  object: z.literal('list'),
  data: z.array(fileSchema),
  has_more: z.boolean(),
});
export const presignedUploadSchema = z.looseObject({
  id: z.string(),
  url: z.string(),
  filename: z.string(),
  content_type: z.string(),
  upload_method: z.literal('PUT'),
  method: z.literal('PUT'),
  public_url: z.null(),
  created_at: z.union([iso, z.number().int()]),
  expiration: z.number().int(),
  expires_at: iso,
});

export const predictionUsageSchema = z.looseObject({
  elements_processed: z.number().nullable(),
  element_type: z.enum(['image', 'page', 'video', 'audio']).nullable(),
  credits_used: z.number().nullable(),
  steps: z.number().nullable(),
  message: z.string().nullable(),
});

/** PredictionResponse. */
export const predictionSchema = z.looseObject({
  id: z.string(),
  object: z.literal('prediction'),
  created_at: iso,
  completed_at: iso.nullable(),
  status,
  model: z.string(),
  domain: z.string().nullable(),
  response: z.unknown().describe('The extracted object (or a list of them, one per page), null until completed'),
  usage: predictionUsageSchema,
  metadata: z.unknown(),
});
export const predictionListSchema = z.array(predictionSchema);
export const predictionDomainSchema = z.looseObject({
  id: z.string(),
  domain: z.string().nullable(),
  model: z.string(),
  kind: z.string(),
  description: z.string().nullable(),
  schema_version: z.string().nullable(),
  schema_hash: z.string().nullable(),
  custom_schema: z.boolean(),
});

const executionUsageSchema = z.looseObject({
  elements_processed: z.number(),
  element_type: z.enum(['image', 'page', 'video', 'audio']).nullable(),
  credits_used: z.number(),
  steps: z.number(),
  message: z.string().nullable(),
  duration_seconds: z.number(),
  service_tier: z.string(),
  cost_dollars: z.number(),
});
const stepSchema = z.looseObject({
  index: z.number().int(),
  kind: z.string(),
  name: z.string().nullable(),
  arguments: z.unknown(),
  error: z.string().nullable(),
  duration_ms: z.number().nullable(),
});
const pauseSchema = z.looseObject({
  kind: z.string(),
  tool_call: z.looseObject({ id: z.string(), name: z.string(), arguments: z.unknown() }).nullable(),
  question: z.string().nullable(),
  paused_at: z.string(),
  expires_at: z.string().nullable(),
  resume: z.array(z.enum(['approve', 'reject', 'edit', 'answer'])),
});

/** AgentExecutionResponse. */
export const executionSchema = z.looseObject({
  id: z.string(),
  name: z.string().nullable(),
  model: z.string().nullable(),
  status,
  execution_mode: z.string(),
  response: anyObject.nullable(),
  usage: executionUsageSchema,
  steps: z.array(stepSchema),
  created_at: iso,
  completed_at: iso.nullable(),
  pause: pauseSchema.optional(),
});
export const executionListSchema = z.array(executionSchema);

/** AgentInfo. */
export const agentSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  version: z.string(),
  description: z.string().nullable(),
  prompt: z.string().nullable(),
  json_schema: anyObject.nullable(),
  tools: z.array(z.string()).nullable(),
  model: z.string().nullable(),
  status: z.string(),
  created_at: iso,
  updated_at: iso,
});
export const agentListSchema = z.array(agentSchema);

/** SkillInfo. */
export const skillSchema = z.looseObject({
  id: z.string(),
  object: z.literal('skill'),
  name: z.string(),
  description: z.string().nullable(),
  skill_version: z.string(),
  status: z.string(),
  is_public: z.boolean(),
  size_bytes: z.number().nullable(),
  created_at: iso,
  updated_at: iso,
});
export const skillListSchema = z.array(skillSchema);
export const skillDownloadSchema = z.object({ download_url: z.string(), expires_in: z.number(), expires_at: iso });

/** The OpenAI chat completion object. */
export const chatCompletionSchema = z.looseObject({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.looseObject({
      index: z.number().int(),
      message: z.looseObject({ role: z.literal('assistant'), content: z.string().nullable() }),
      finish_reason: z.string().nullable(),
    }),
  ),
  usage: z
    .looseObject({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() })
    .optional(),
});
export const modelSchema = z.looseObject({
  id: z.string(),
  object: z.literal('model'),
  created: z.number().int(),
  owned_by: z.string(),
});
export const modelListSchema = z.looseObject({ object: z.literal('list'), data: z.array(modelSchema) });
export const embeddingsSchema = z.looseObject({
  object: z.literal('list'),
  data: z.array(
    z.looseObject({
      object: z.literal('embedding'),
      index: z.number().int(),
      embedding: z.union([z.array(z.number()), z.string()]),
    }),
  ),
  model: z.string(),
  usage: z.looseObject({ prompt_tokens: z.number(), total_tokens: z.number() }),
});
export const transcriptionSchema = z.looseObject({ text: z.string() });

export const hubInfoSchema = z.looseObject({ version: z.string() });
export const domainSchema = z.looseObject({ domain: z.string() });
export const domainListSchema = z.array(domainSchema);
export const schemaResponseSchema = z.looseObject({
  domain: z.string(),
  schema_version: z.string().optional(),
  schema_hash: z.string().optional(),
  json_schema: anyObject,
});
export const structuredModelListSchema = z.array(z.looseObject({ model: z.string(), domain: z.string() }));

export const mcpServerSchema = z.looseObject({ id: z.string(), name: z.string(), url: z.string() });
export const mcpServerListSchema = z.array(mcpServerSchema);
export const remoteToolListSchema = z.array(z.looseObject({ name: z.string() }));

export const artifactSchema = z.looseObject({ object_id: z.string() });
export const artifactListSchema = z.array(artifactSchema);

export const feedbackSchema = z.looseObject({ id: z.string() });

export const evaluationSchema = z.looseObject({ id: z.string(), status: z.string() });
export const evaluationListSchema = z.array(evaluationSchema);

/** A loose object for answers whose fields docs/… lists (admin reports, evaluation details, chat threads). */
export const objectSchema = anyObject;
export const objectListSchema = z.array(anyObject);
