/**
 * The chat completion body: its zod schema (which words every 422) and a hand-written check of the same rules
 * for the gateway's hot path. Parsing even a small body with zod was a measurable share of a gateway call's CPU;
 * nearly every body is well-formed, so the check accepts those directly and leaves anything doubtful to zod,
 * which then reports exactly what is wrong. The check may only accept what the schema accepts (a unit test holds
 * the two together).
 */
import { z } from 'zod';
import { parseInput } from './validation';

export const chatBodySchema = z
  .object({
    model: z.string().min(1).optional(),
    messages: z.array(z.object({ role: z.string().min(1), content: z.unknown().optional() }).loose()).min(1),
    stream: z.boolean().nullish(),
    max_tokens: z.number().int().min(1).nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    reasoning_effort: z.enum(['none', 'minimal', 'low']).nullish(),
    video_fps: z.number().positive().nullish(),
    video_max_frames: z.number().int().min(1).nullish(),
    document_dpi: z.number().int().min(36).max(600).nullish(),
  })
  .loose();

export type ChatBody = z.output<typeof chatBodySchema>;

const REASONING_EFFORTS = new Set(['none', 'minimal', 'low']);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const absent = (v: unknown): boolean => v === undefined || v === null;
const intIn = (v: unknown, min: number, max = Number.MAX_SAFE_INTEGER): boolean =>
  Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max;

/** True only for bodies `chatBodySchema` accepts as they are (it may say false for some it would accept). */
export function isWellFormedChatBody(body: unknown): body is ChatBody {
  if (!isObject(body)) return false;
  const { model, messages, stream, max_tokens, temperature, reasoning_effort } = body;
  if (model !== undefined && (typeof model !== 'string' || model.length === 0)) return false;
  if (!Array.isArray(messages) || messages.length === 0) return false;
  for (const message of messages) {
    if (!isObject(message) || typeof message.role !== 'string' || message.role.length === 0) return false;
  }
  if (!absent(stream) && typeof stream !== 'boolean') return false;
  if (!absent(max_tokens) && !intIn(max_tokens, 1)) return false;
  if (!absent(temperature) && !(typeof temperature === 'number' && temperature >= 0 && temperature <= 2)) {
    return false;
  }
  if (!absent(reasoning_effort) && !REASONING_EFFORTS.has(reasoning_effort as string)) return false;
  const { video_fps, video_max_frames, document_dpi } = body;
  if (!absent(video_fps) && !(typeof video_fps === 'number' && Number.isFinite(video_fps) && video_fps > 0)) {
    return false;
  }
  if (!absent(video_max_frames) && !intIn(video_max_frames, 1)) return false;
  if (!absent(document_dpi) && !intIn(document_dpi, 36, 600)) return false;
  return true;
}

/**
 * The chat body, checked: well-formed bodies as they are, anything else through zod.
 * @throws RequestValidationError (422) listing every issue.
 */
export function parseChatBody(body: unknown): ChatBody {
  return isWellFormedChatBody(body) ? body : parseInput(chatBodySchema, body, 'body');
}

/**
 * The agent models' chat-thread fields (`session_id`, `public`, `session_token`, `skills`, `require_approval`,
 * `multitask_strategy`); see
 * agent-completions.
 */
export const chatThreadFieldsSchema = z
  .object({
    session_id: z.string().min(1).max(200).nullish(),
    public: z.boolean().nullish(),
    session_token: z.string().min(8).max(200).nullish(),
    skills: z.array(z.record(z.string(), z.unknown())).nullish(),
    /** Tools whose calls wait for the person's approval in the turn (docs/agent-runs.md). */
    require_approval: z.array(z.string().min(1)).max(64).nullish(),
    /** What a message to a chat with a turn in progress does (docs/agents.md). */
    multitask_strategy: z.enum(['reject', 'interrupt', 'rollback', 'enqueue']).nullish(),
  })
  .loose();

const THREAD_FIELDS = [
  'session_id',
  'public',
  'session_token',
  'skills',
  'require_approval',
  'multitask_strategy',
] as const;

/**
 * Checks the chat-thread fields when any is present (most calls carry none, and skip the check).
 * @throws RequestValidationError (422).
 */
export function parseChatThreadFields(body: unknown): void {
  if (isObject(body) && THREAD_FIELDS.some((k) => body[k] !== undefined)) {
    parseInput(chatThreadFieldsSchema, body, 'body');
  }
}
