/**
 * Structured replies are checked: when a caller asks an upstream model for `response_format: {type: 'json_schema',
 * json_schema: {schema, strict: true}}`, the reply's content must parse as JSON and match the schema before it is
 * answered. Upstream servers differ in how (and whether) they enforce a schema while generating — vLLM and Ollama
 * constrain decoding, others only prompt for it — so the gateway checks what comes back rather than trusting it.
 *
 * This module only reads a body and judges a reply; upstream-completion.ts runs the calls (one retry carrying the
 * errors this module writes, then 502 `upstream_schema_violation`) and bills them.
 *
 * Work budget: the schema was measured and charged to the request when the request was checked
 * (capabilities.ts); judging the reply compiles it again (a cache hit) on a budget of its own
 * (`withOwnWorkBudget`), so a schema accepted at the door is not charged twice and cannot fail with
 * `work_budget_exceeded` after the upstream has been paid for. The check itself is linear in the reply, whose size
 * the upstream client bounds.
 */
import { checkAgainstSchema } from '../../lib/json-schema';
import { withOwnWorkBudget } from '../../lib/work-budget';
import type { Json } from './chat.types';

/** The schema of a strict `json_schema` response format (OpenAI's shape), or null when the body asks for none. */
export function strictResponseSchema(body: Json): Json | null {
  const format = body.response_format;
  if (!isObject(format) || format.type !== 'json_schema') return null;
  const spec = format.json_schema;
  if (!isObject(spec) || spec.strict !== true) return null;
  return isObject(spec.schema) ? spec.schema : null;
}

/** What is wrong with a reply: human-readable problems, empty when it is valid. */
export interface ReplyVerdict {
  valid: boolean;
  /** At most ten, each naming the choice when the reply has several (`choice 1: /total must be number`). */
  errors: string[];
  /** The content that failed (of the first failing choice), to show the model on the retry. */
  failedContent: string | null;
}

/**
 * Judges every choice of a non-streamed reply. A choice that answers with tool calls or a refusal (and no content)
 * is not a structured answer and is not judged; a choice with content that does not parse, or parses and does not
 * match, fails the reply.
 */
export function judgeReply(schema: Json, reply: Json): ReplyVerdict {
  const choices = Array.isArray(reply.choices) ? (reply.choices as unknown[]) : [];
  const several = choices.length > 1;
  const errors: string[] = [];
  let failedContent: string | null = null;
  if (choices.length === 0) return { valid: false, errors: ['the reply has no choices'], failedContent };
  choices.forEach((choice, index) => {
    const message = isObject(choice) && isObject(choice.message) ? choice.message : {};
    const content = message.content;
    const answersOtherwise =
      (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) || typeof message.refusal === 'string';
    if ((content === null || content === undefined || content === '') && answersOtherwise) return;
    const problems = contentProblems(schema, content);
    if (problems.length === 0) return;
    failedContent ??= typeof content === 'string' ? content : JSON.stringify(content ?? null);
    for (const problem of problems) errors.push(several ? `choice ${index}: ${problem}` : problem);
  });
  return { valid: errors.length === 0, errors: errors.slice(0, 10), failedContent };
}

/** Why `content` is not a JSON text matching `schema` (empty when it is). */
function contentProblems(schema: Json, content: unknown): string[] {
  if (typeof content !== 'string') return ['the reply has no text content'];
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return [`the reply is not JSON (it starts ${JSON.stringify(content.slice(0, 40))})`];
  }
  const check = withOwnWorkBudget(() => checkAgainstSchema(schema, value));
  return check.valid ? [] : check.errors;
}

/**
 * The body of the retry: the first call's messages, the reply that failed (as the assistant's turn) and a user
 * message naming each problem and asking for JSON that matches.
 */
export function retryBody(body: Json, verdict: ReplyVerdict): Json {
  const messages = Array.isArray(body.messages) ? (body.messages as unknown[]) : [];
  const correction =
    'Your previous reply did not match the required JSON schema (response_format). Problems:\n' +
    verdict.errors.map((e) => `- ${e}`).join('\n') +
    '\nReply again with only a JSON value that matches the schema exactly.';
  return {
    ...body,
    messages: [
      ...messages,
      { role: 'assistant', content: verdict.failedContent ?? '' },
      { role: 'user', content: correction },
    ],
  };
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
