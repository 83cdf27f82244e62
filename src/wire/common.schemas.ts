/**
 * Shared wire-schema pieces: query-string integers and booleans parsed the way FastAPI parses them, and the
 * skip/limit pagination every list endpoint uses.
 */
import { z } from 'zod';

const INTEGER_TEXT = /^\s*[+-]?\d+\s*$/;
const TRUE_WORDS = new Set(['1', 'true', 't', 'yes', 'y', 'on']);
const FALSE_WORDS = new Set(['0', 'false', 'f', 'no', 'n', 'off']);

/** An integer from a query string, within bounds, with a default when absent. */
export function queryInt(options: { min?: number; max?: number; default: number }) {
  let schema = z.number().int();
  if (options.min !== undefined) schema = schema.min(options.min);
  if (options.max !== undefined) schema = schema.max(options.max);
  return z.preprocess(
    (v) => (typeof v === 'string' && INTEGER_TEXT.test(v) ? Number(v) : v),
    schema.default(options.default),
  );
}

/** A boolean from a query string (`true/false/1/0/yes/no/on/off`), with a default when absent. */
export function queryBool(fallback: boolean) {
  return z.preprocess((v) => {
    if (typeof v !== 'string') return v;
    const word = v.trim().toLowerCase();
    if (TRUE_WORDS.has(word)) return true;
    if (FALSE_WORDS.has(word)) return false;
    return v;
  }, z.boolean().default(fallback));
}

/** `skip` >= 0 (default 0) and `limit` 1..max (default as given). */
export function pagination(limit: { max: number; default: number }) {
  return z.object({
    skip: queryInt({ min: 0, default: 0 }),
    limit: queryInt({ min: 1, max: limit.max, default: limit.default }),
  });
}
