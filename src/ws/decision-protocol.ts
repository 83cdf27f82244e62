/**
 * The decision stream's wire protocol: one zod schema per message, client and server alike.
 *
 * Client → server: JSON text messages (`session.create`, `session.close`) and binary messages, each one frame
 * (JPEG or PNG). Server → client: JSON text events. The settings of `session.create` may sit at the top level of
 * the message or inside `session` (the inner ones win). Server events are built through these schemas' types, and
 * the tests parse every event they receive with them.
 */
import { z } from 'zod';
import { QUESTION_TYPES } from '../gateway/decisions/decision-request';

export { DECISION_STREAM_PATHS } from '../gateway/decisions/decision-request';

// ---- client → server ----------------------------------------------------------------------------------------

const settingsShape = {
  model: z.unknown().optional(),
  steps: z.unknown().optional(),
  questions: z.unknown().optional(),
};

/** `session.create`: settings validated by `decisionSettingsSchema` once merged. */
export const sessionCreateSchema = z.object({
  type: z.literal('session.create'),
  ...settingsShape,
  session: z.object(settingsShape).strict().optional(),
});
export const sessionCloseSchema = z.object({ type: z.literal('session.close') });
export const clientMessageSchema = z.discriminatedUnion('type', [sessionCreateSchema, sessionCloseSchema]);
export type ClientMessage = z.output<typeof clientMessageSchema>;

/** The settings of a `session.create`, the `session` object's fields over the top-level ones. */
export function settingsOf(message: z.output<typeof sessionCreateSchema>): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const key of ['model', 'steps', 'questions'] as const) {
    const value = message.session?.[key] ?? message[key];
    if (value !== undefined) merged[key] = value;
  }
  return merged;
}

// ---- server → client ----------------------------------------------------------------------------------------

const answerSchema = z.union([z.boolean(), z.number(), z.string(), z.null()]);
const usageSchema = z.object({
  prompt_tokens: z.number().int().min(0),
  completion_tokens: z.number().int().min(0),
  total_tokens: z.number().int().min(0),
  cost: z.number().min(0),
});

export const sessionCreatedEventSchema = z.object({
  type: z.literal('session.created'),
  session: z.object({
    id: z.string(),
    model: z.string(),
    upstream_model: z.string().nullable(),
    questions: z.array(
      z.object({
        id: z.string(),
        type: z.enum(QUESTION_TYPES),
        route: z.enum(['local', 'upstream']),
        kind: z.string().nullable(),
      }),
    ),
    max_frame_bytes: z.number().int(),
    idle_timeout_s: z.number(),
  }),
});

export const decisionEventSchema = z.object({
  type: z.literal('decision'),
  session_id: z.string(),
  /** 1-based number of the binary message on this connection. */
  seq: z.number().int().min(1),
  answers: z.record(z.string(), answerSchema),
  latency_ms: z.number().min(0),
  usage: usageSchema,
});

export const DROP_REASONS = ['engine_busy', 'send_buffer_full'] as const;
export const frameDroppedEventSchema = z.object({
  type: z.literal('frame.dropped'),
  seq: z.number().int().min(1),
  reason: z.enum(DROP_REASONS),
});

export const errorEventSchema = z.object({
  type: z.literal('error'),
  /** The frame the error is about, when it is about one. */
  seq: z.number().int().min(1).optional(),
  error: z.object({
    message: z.string(),
    type: z.string(),
    code: z.string().nullable(),
    param: z.string().nullable(),
    /** The id of the question at fault, when the error is about one. */
    question: z.string().optional(),
    retry_after_s: z.number().optional(),
    issues: z
      .array(z.object({ type: z.string(), loc: z.array(z.union([z.string(), z.number()])), msg: z.string() }).loose())
      .optional(),
  }),
});

export const CLOSE_REASONS = ['client_closed', 'idle_timeout', 'server_shutdown'] as const;
export const sessionClosedEventSchema = z.object({
  type: z.literal('session.closed'),
  reason: z.enum(CLOSE_REASONS),
  frames: z.object({
    received: z.number().int(),
    decided: z.number().int(),
    dropped: z.number().int(),
    failed: z.number().int(),
  }),
});

export const serverEventSchema = z.discriminatedUnion('type', [
  sessionCreatedEventSchema,
  decisionEventSchema,
  frameDroppedEventSchema,
  errorEventSchema,
  sessionClosedEventSchema,
]);
export type ServerEvent = z.output<typeof serverEventSchema>;
export type ErrorEvent = z.output<typeof errorEventSchema>;
export type SessionClosedEvent = z.output<typeof sessionClosedEventSchema>;
