/**
 * Request validation with zod, reported the way FastAPI reports it.
 *
 * Real clients of the hosted service parse `{detail:[{type, loc, msg, input, ctx}]}` with pydantic's vocabulary
 * (`missing`, `int_parsing`, `greater_than_equal`, `enum` …), so zod issues are translated into those words.
 */
import type { z } from 'zod';
import { RequestValidationError, type ValidationIssue } from '../domain/errors';

export type InputLocation = 'body' | 'query' | 'path' | 'header';

/**
 * Parses `value` with `schema`.
 * @throws RequestValidationError (422) listing every issue.
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, location: InputLocation): z.output<S> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  throw new RequestValidationError(result.error.issues.map((issue) => toFastApiIssue(issue, value, location)));
}

/** A 422 for one field, for checks that happen outside a schema. */
export function fieldError(location: InputLocation, field: string, type: string, msg: string, input: unknown) {
  return new RequestValidationError([{ type, loc: [location, field], msg, input }]);
}

type ZodIssue = z.core.$ZodIssue;

function toFastApiIssue(issue: ZodIssue, root: unknown, location: InputLocation): ValidationIssue {
  const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
  const loc = [location, ...path];
  // Query and path values are reported as the caller wrote them, before any coercion.
  const raw = location === 'body' ? undefined : valueAt(root, path);
  const input = raw ?? (issue as { input?: unknown }).input;
  const base = { loc, input };
  switch (issue.code) {
    case 'invalid_type':
      if (input === undefined) return { ...base, type: 'missing', msg: 'Field required', input: parentOf(root, path) };
      return typeIssue(issue.expected, base, location);
    case 'too_small':
      return boundIssue('min', issue.origin, Number(issue.minimum), issue.inclusive ?? true, base);
    case 'too_big':
      return boundIssue('max', issue.origin, Number(issue.maximum), issue.inclusive ?? true, base);
    case 'invalid_value': {
      const expected = quoteList(issue.values.map((v) => `'${String(v)}'`));
      return issue.values.length === 1
        ? { ...base, type: 'literal_error', msg: `Input should be ${expected}`, ctx: { expected } }
        : { ...base, type: 'enum', msg: `Input should be ${expected}`, ctx: { expected } };
    }
    case 'invalid_format':
      if (issue.format === 'regex' && 'pattern' in issue) {
        const pattern = String(issue.pattern);
        return {
          ...base,
          type: 'string_pattern_mismatch',
          msg: `String should match pattern '${pattern}'`,
          ctx: { pattern },
        };
      }
      if (issue.format === 'url') return { ...base, type: 'url_parsing', msg: 'Input should be a valid URL' };
      return { ...base, type: 'value_error', msg: `Value error, invalid ${issue.format}` };
    case 'unrecognized_keys':
      return { ...base, type: 'extra_forbidden', msg: 'Extra inputs are not permitted', input: issue.keys };
    case 'invalid_union':
      if (input === undefined) return { ...base, type: 'missing', msg: 'Field required', input: parentOf(root, path) };
      return { ...base, type: 'value_error', msg: `Value error, ${issue.message}` };
    case 'invalid_key':
    case 'invalid_element':
    case 'not_multiple_of':
    case 'custom':
      return { ...base, type: 'value_error', msg: `Value error, ${issue.message}` };
  }
}

function typeIssue(
  expected: string,
  base: Omit<ValidationIssue, 'type' | 'msg'>,
  location: InputLocation,
): ValidationIssue {
  const fromText = location !== 'body' && typeof base.input === 'string';
  switch (expected) {
    case 'int':
    case 'number':
      return fromText
        ? { ...base, type: 'int_parsing', msg: 'Input should be a valid integer, unable to parse string as an integer' }
        : { ...base, type: 'int_type', msg: 'Input should be a valid integer' };
    case 'boolean':
      return fromText
        ? { ...base, type: 'bool_parsing', msg: 'Input should be a valid boolean, unable to interpret input' }
        : { ...base, type: 'bool_type', msg: 'Input should be a valid boolean' };
    case 'string':
      return { ...base, type: 'string_type', msg: 'Input should be a valid string' };
    case 'array':
      return { ...base, type: 'list_type', msg: 'Input should be a valid list' };
    case 'object':
    case 'record':
      return base.loc.length === 1
        ? {
            ...base,
            type: 'model_attributes_type',
            msg: 'Input should be a valid dictionary or object to extract fields from',
          }
        : { ...base, type: 'dict_type', msg: 'Input should be a valid dictionary' };
    default:
      return { ...base, type: `${expected}_type`, msg: `Input should be a valid ${expected}` };
  }
}

function boundIssue(
  side: 'min' | 'max',
  origin: string,
  limit: number,
  inclusive: boolean,
  base: Omit<ValidationIssue, 'type' | 'msg'>,
): ValidationIssue {
  if (origin === 'string') {
    return side === 'min'
      ? {
          ...base,
          type: 'string_too_short',
          msg: `String should have at least ${limit} character${plural(limit)}`,
          ctx: { min_length: limit },
        }
      : {
          ...base,
          type: 'string_too_long',
          msg: `String should have at most ${limit} character${plural(limit)}`,
          ctx: { max_length: limit },
        };
  }
  if (origin === 'array' || origin === 'set') {
    return side === 'min'
      ? {
          ...base,
          type: 'too_short',
          msg: `List should have at least ${limit} item${plural(limit)}`,
          ctx: { min_length: limit },
        }
      : {
          ...base,
          type: 'too_long',
          msg: `List should have at most ${limit} item${plural(limit)}`,
          ctx: { max_length: limit },
        };
  }
  if (side === 'min') {
    return inclusive
      ? {
          ...base,
          type: 'greater_than_equal',
          msg: `Input should be greater than or equal to ${limit}`,
          ctx: { ge: limit },
        }
      : { ...base, type: 'greater_than', msg: `Input should be greater than ${limit}`, ctx: { gt: limit } };
  }
  return inclusive
    ? { ...base, type: 'less_than_equal', msg: `Input should be less than or equal to ${limit}`, ctx: { le: limit } }
    : { ...base, type: 'less_than', msg: `Input should be less than ${limit}`, ctx: { lt: limit } };
}

function valueAt(root: unknown, path: (string | number)[]): unknown {
  let node = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node;
}

function parentOf(root: unknown, path: (string | number)[]): unknown {
  return valueAt(root, path.slice(0, -1)) ?? {};
}

function quoteList(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

const plural = (n: number): string => (n === 1 ? '' : 's');
