/**
 * Asks an upstream vision model (any OpenAI-compatible chat model that reads images) the questions no local
 * measure answers: one chat call per frame with the frame as a data URL, the questions listed with their types,
 * and a JSON-schema response format where the model can enforce one. Each answer is then checked against its
 * question's type and bounds; an answer that does not fit is null, never coerced into something invented.
 */
import type { Answer, DecisionQuestion } from '../../engines/decision/decision.engine';
import { frameFormat } from '../../engines/decision/frame-pixels';
import type { CancelSignal } from '../../lib/cancel';
import { UpstreamError } from '../gateway-errors';
import type { CatalogueModel, UpstreamTarget } from '../catalogue/model.types';
import type { UpstreamClient, UpstreamJson } from '../upstream/upstream-client';

export interface UpstreamDecision {
  answers: Record<string, Answer>;
  promptTokens: number;
  completionTokens: number;
}

const INSTRUCTIONS =
  'You answer questions about one image. Reply with only a JSON object whose keys are the question ids and whose ' +
  'values are the answers in the requested type. Use null when the image does not show the answer.';

/** The JSON schema of the reply: one typed property per question, all required, nullable. */
export function answerSchema(questions: readonly DecisionQuestion[]): Record<string, unknown> {
  const property = (q: DecisionQuestion): Record<string, unknown> => {
    switch (q.type) {
      case 'enum':
        return { type: ['string', 'null'], enum: [...(q.options ?? []), null] };
      case 'integer':
      case 'number':
        return {
          type: [q.type, 'null'],
          ...(q.min === undefined ? {} : { minimum: q.min }),
          ...(q.max === undefined ? {} : { maximum: q.max }),
        };
      case 'boolean':
      case 'string':
        return { type: [q.type, 'null'] };
    }
  };
  return {
    type: 'object',
    properties: Object.fromEntries(questions.map((q) => [q.id, property(q)])),
    required: questions.map((q) => q.id),
    additionalProperties: false,
  };
}

/** An answer that fits the question, or null. */
export function fitAnswer(q: DecisionQuestion, value: unknown): Answer {
  switch (q.type) {
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'string':
      return typeof value === 'string' ? value : null;
    case 'enum':
      return typeof value === 'string' && (q.options ?? []).includes(value) ? value : null;
    case 'integer':
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return null;
      if (q.type === 'integer' && !Number.isInteger(value)) return null;
      if ((q.min !== undefined && value < q.min) || (q.max !== undefined && value > q.max)) return null;
      return value;
    }
  }
}

export async function askUpstream(
  client: UpstreamClient,
  target: UpstreamTarget,
  model: CatalogueModel,
  call: { frame: Buffer; questions: readonly DecisionQuestion[]; steps: number | undefined; signal?: CancelSignal },
): Promise<UpstreamDecision> {
  const listing = call.questions
    .map((q) => {
      const extra = q.type === 'enum' ? ` (one of: ${(q.options ?? []).join(', ')})` : bounds(q);
      return `- ${q.id} [${q.type}${extra}]: ${q.question}`;
    })
    .join('\n');
  const mime = frameFormat(call.frame) === 'png' ? 'image/png' : 'image/jpeg';
  const supports = (name: string): boolean => model.supportedParameters.includes(name);
  const body: UpstreamJson = {
    model: target.model,
    messages: [
      { role: 'system', content: INSTRUCTIONS },
      {
        role: 'user',
        content: [
          { type: 'text', text: `Questions:\n${listing}` },
          { type: 'image_url', image_url: { url: `data:${mime};base64,${call.frame.toString('base64')}` } },
        ],
      },
    ],
  };
  if (supports('response_format')) {
    body.response_format = model.capabilities.jsonSchema
      ? {
          type: 'json_schema',
          json_schema: { name: 'decision', strict: true, schema: answerSchema(call.questions) },
        }
      : { type: 'json_object' };
  }
  if (supports('temperature')) body.temperature = 0;
  if (call.steps !== undefined) body.steps = call.steps;
  const reply = await client.chat(target, body, call.signal ? { signal: call.signal } : {});
  const content = firstContent(reply);
  const parsed = parseObject(content);
  if (parsed === null) throw new UpstreamError(target.provider, 'The model did not answer with a JSON object');
  const usage = (reply.usage ?? {}) as Record<string, unknown>;
  return {
    // Own keys only: a question id like `__proto__` reads the model's answer, never Object.prototype.
    answers: Object.fromEntries(
      call.questions.map((q) => [q.id, fitAnswer(q, Object.hasOwn(parsed, q.id) ? parsed[q.id] : null)]),
    ),
    promptTokens: typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : 0,
    completionTokens: typeof usage.completion_tokens === 'number' ? usage.completion_tokens : 0,
  };
}

function bounds(q: DecisionQuestion): string {
  if (q.min === undefined && q.max === undefined) return '';
  return ` in ${q.min ?? '-inf'}..${q.max ?? 'inf'}`;
}

function firstContent(reply: UpstreamJson): string {
  const choices = Array.isArray(reply.choices) ? (reply.choices as Record<string, unknown>[]) : [];
  const message = choices[0]?.message as Record<string, unknown> | undefined;
  return typeof message?.content === 'string' ? message.content : '';
}

/** The JSON object in a reply, allowing a Markdown code fence around it. */
function parseObject(content: string): Record<string, unknown> | null {
  const unfenced = content
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/\s*```$/, '');
  try {
    const value = JSON.parse(unfenced) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
