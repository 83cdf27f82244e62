/**
 * Turns a planner's final text into the execution's response: always a JSON object (the spec's record says so),
 * checked against the response schema when one was asked.
 */
import { checkAgainstSchema } from '../lib/json-schema';
import type { JsonSchema } from './sdk';

export interface FinalAnswer {
  response: Record<string, unknown>;
  /** Schema problems (empty when valid or when no schema was asked). */
  schemaErrors: string[];
  /** False when the text held no JSON object (it is then wrapped as `{text}`). */
  parsed: boolean;
}

/** The first JSON object in `content` (code fences and prose around it are ignored). */
export function parseJsonObject(content: string | null): Record<string, unknown> | null {
  if (!content) return null;
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(content)?.[1];
  for (const candidate of [content, fenced, sliceObject(content)]) {
    if (!candidate) continue;
    try {
      const value: unknown = JSON.parse(candidate.trim());
      if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
    } catch {
      // try the next candidate
    }
  }
  return null;
}

function sliceObject(text: string): string | null {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  return start >= 0 && end > start ? text.slice(start, end + 1) : null;
}

export function finalAnswer(content: string | null, schema: JsonSchema | null): FinalAnswer {
  const object = parseJsonObject(content);
  if (!schema) return { response: object ?? { text: content ?? '' }, schemaErrors: [], parsed: object !== null };
  if (!object) return { response: {}, schemaErrors: ['the answer is not a JSON object'], parsed: false };
  return { response: object, schemaErrors: checkAgainstSchema(schema, object).errors, parsed: true };
}

/** For the loop's `checkFinal`: a problem statement for the planner, or null. */
export function finalProblem(content: string | null, schema: JsonSchema | null): string | null {
  const answer = finalAnswer(content, schema);
  if (schema === null) return null;
  if (!answer.parsed) return 'Your final answer must be one JSON object matching the response schema.';
  if (answer.schemaErrors.length > 0) {
    return `Your answer does not match the response schema: ${answer.schemaErrors.join('; ')}.`;
  }
  return null;
}
