/**
 * JSON Schema checking with ajv, behind one budget: every schema a caller sends is measured before anything
 * compiles, fills or validates with it, and the same rules refuse it on every route.
 *
 * Callers send draft-07 and 2020-12-ish schemas with pydantic extras (`title`, `default`, `$defs`); ajv runs in
 * non-strict mode so unknown keywords are ignored rather than fatal, and formats (`date`, `date-time`, `email`)
 * are checked by ajv-formats.
 *
 * Why a budget: a 150-byte schema whose properties each `$ref: "#"` expands exponentially in anything that walks
 * it as a tree (the local extractor), ajv's compile time grows faster than linearly with the schema, and a deep
 * one overflows the stack. {@link measureSchema} walks the schema iteratively, resolving local `$ref`s as it goes,
 * with a step budget: it refuses a recursive schema (a `$ref` to a schema it is inside of), one that expands past
 * {@link SCHEMA_LIMITS}, non-local references, and nesting deeper than the limit, each with a readable reason.
 * Nothing it returns or throws carries an internal message ("Maximum call stack size exceeded").
 */
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { createHash } from 'node:crypto';

const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: true, allowUnionTypes: true });
addFormats(ajv);
const cache = new Map<string, ValidateFunction>();
const MAX_CACHED = 256;

/**
 * The budget. Schemas count their objects and arrays (a property `{type, description}` is one); real extraction
 * schemas have tens to a few hundred. ajv compiles 2,000 properties in a few hundred milliseconds on one core,
 * and the extractor walks the expanded tree once per document.
 */
export const SCHEMA_LIMITS = {
  /** Objects and arrays in the schema as sent. */
  maxNodes: 2000,
  /** Objects and arrays once every `$ref` is replaced by what it points at. */
  maxExpandedNodes: 4000,
  /** Nesting of objects and arrays, counted through `$ref`s. */
  maxDepth: 64,
} as const;

/** A schema this module will not use; `message` is written for the caller (no internal text). */
export class SchemaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SchemaError';
  }
}

export interface SchemaSize {
  nodes: number;
  expandedNodes: number;
}

export interface SchemaCheck {
  valid: boolean;
  /** Human-readable problems (`/total must be number`), at most ten. */
  errors: string[];
}

const isContainer = (v: unknown): v is Record<string, unknown> | unknown[] => typeof v === 'object' && v !== null;
const LOCAL_REF = /^#(\/.*)?$/;

function unescapePointer(part: string): string {
  let decoded = part;
  try {
    decoded = decodeURIComponent(part);
  } catch {
    // not percent-encoded: use as is
  }
  return decoded.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** The value at a local `#/a/b` pointer, or undefined. Cost: the pointer's length. */
function resolveLocal(root: unknown, ref: string): unknown {
  let at: unknown = root;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    if (!isContainer(at)) return undefined;
    const part = unescapePointer(raw);
    at = Object.prototype.hasOwnProperty.call(at, part) ? (at as Record<string, unknown>)[part] : undefined;
  }
  return at;
}

const escapePointer = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** Where a `$ref` points, in the spelling the walk gives pointers (`#/%24defs/a/` and `#/$defs/a` are one). */
function canonical(ref: string): string {
  const parts = ref
    .slice(1)
    .split('/')
    .slice(1)
    .filter((p) => p !== '');
  return ['#', ...parts.map((p) => escapePointer(unescapePointer(p)))].join('/');
}

interface Frame {
  value: unknown;
  /** JSON pointer of `value` in the schema as sent (`#/properties/a`). */
  pointer: string;
  depth: number;
  /** True for the marker that pops `pointer` off the active path once its children are done. */
  exit: boolean;
}

/**
 * Walks `schema` once, following local `$ref`s in place, and returns its raw and expanded sizes.
 * Steps are bounded by {@link SCHEMA_LIMITS.maxExpandedNodes}, whatever the schema.
 * @throws SchemaError with a reason a caller can act on.
 */
export function measureSchema(schema: unknown): SchemaSize {
  if (!isContainer(schema) || Array.isArray(schema)) throw new SchemaError('a JSON schema must be an object');
  const nodes = countRaw(schema);
  // Pointers of the schemas the walk is inside of (as sent and as reached through `$ref`s): a `$ref` to one of
  // them would expand forever.
  const active = new Map<string, number>();
  const stack: Frame[] = [{ value: schema, pointer: '#', depth: 0, exit: false }];
  let expanded = 0;
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    if (frame.exit) {
      const left = (active.get(frame.pointer) ?? 1) - 1;
      if (left === 0) active.delete(frame.pointer);
      else active.set(frame.pointer, left);
      continue;
    }
    if (!isContainer(frame.value)) continue;
    expanded += 1;
    if (expanded > SCHEMA_LIMITS.maxExpandedNodes) {
      throw new SchemaError(
        `its $refs expand to more than ${SCHEMA_LIMITS.maxExpandedNodes} schema objects; ` +
          'inline fewer shared definitions or send a smaller schema',
      );
    }
    if (frame.depth > SCHEMA_LIMITS.maxDepth) {
      throw new SchemaError(`it is nested more than ${SCHEMA_LIMITS.maxDepth} levels deep (counted through $refs)`);
    }
    active.set(frame.pointer, (active.get(frame.pointer) ?? 0) + 1);
    stack.push({ value: null, pointer: frame.pointer, depth: frame.depth, exit: true });
    const entries: [string, unknown][] = Array.isArray(frame.value)
      ? frame.value.map((v, i) => [String(i), v])
      : Object.entries(frame.value);
    // Pushed last-first so the walk (and the first problem it names) follows the schema's own order.
    for (const [key, child] of entries.reverse()) {
      const pointer = `${frame.pointer}/${escapePointer(key)}`;
      if (key === '$ref' && typeof child === 'string' && !Array.isArray(frame.value)) {
        stack.push(follow(schema, child, frame.pointer, frame.depth + 1, active));
      } else if ((key === '$dynamicRef' || key === '$recursiveRef') && typeof child === 'string') {
        throw new SchemaError(`${key} (at ${frame.pointer}) is not supported; use a local "$ref": "#/$defs/..."`);
      } else if (isContainer(child)) {
        stack.push({ value: child, pointer, depth: frame.depth + 1, exit: false });
      }
    }
  }
  return { nodes, expandedNodes: expanded };
}

/** The frame that walks a `$ref`'s target in place of the reference. */
function follow(root: unknown, ref: string, at: string, depth: number, active: Map<string, number>): Frame {
  if (!LOCAL_REF.test(ref)) {
    throw new SchemaError(
      `"$ref": ${JSON.stringify(ref.slice(0, 100))} (at ${at}) is not a local reference; only "#/..." is supported`,
    );
  }
  const target = canonical(ref);
  if (active.has(target)) {
    throw new SchemaError(
      `it is recursive: "$ref": ${JSON.stringify(ref.slice(0, 100))} (at ${at}) refers to a schema it is part of; ` +
        'recursive schemas are not supported',
    );
  }
  const value = resolveLocal(root, target);
  if (value === undefined) {
    throw new SchemaError(`"$ref": ${JSON.stringify(ref.slice(0, 100))} (at ${at}) points at nothing`);
  }
  return { value, pointer: target, depth, exit: false };
}

/** Objects and arrays in the schema as sent, refused past the limit (iterative: no stack to overflow). */
function countRaw(schema: unknown): number {
  let count = 0;
  const stack: { value: unknown; depth: number }[] = [{ value: schema, depth: 0 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop() as { value: unknown; depth: number };
    if (!isContainer(value)) continue;
    count += 1;
    if (count > SCHEMA_LIMITS.maxNodes) {
      throw new SchemaError(`it has more than ${SCHEMA_LIMITS.maxNodes} schema objects`);
    }
    if (depth > SCHEMA_LIMITS.maxDepth) {
      throw new SchemaError(`it is nested more than ${SCHEMA_LIMITS.maxDepth} levels deep`);
    }
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      if (isContainer(child)) stack.push({ value: child, depth: depth + 1 });
    }
  }
  return count;
}

/**
 * Measures `schema` against the budget, then compiles it (cached by content).
 * @throws SchemaError with a readable reason when it is over the budget or not a usable JSON schema.
 */
export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  const key = createHash('sha256').update(JSON.stringify(schema)).digest('hex');
  const cached = cache.get(key);
  if (cached) return cached;
  measureSchema(schema);
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(withKnownDialect(schema));
  } catch (error) {
    throw new SchemaError(readable(error));
  }
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value ?? '');
  cache.set(key, validate);
  return validate;
}

/**
 * The schema with a `$schema` this ajv does not know (e.g. 2020-12, which LangChain and zod emit) taken off, so it
 * is read as the drafts it speaks alike are (unknown keywords ignored, as everywhere here) instead of refused for
 * naming a meta-schema that is not loaded.
 */
function withKnownDialect(schema: Record<string, unknown>): Record<string, unknown> {
  const dialect = schema.$schema;
  if (typeof dialect !== 'string' || ajv.getSchema(dialect) !== undefined) return schema;
  const { $schema: _unknownDialect, ...rest } = schema;
  return rest;
}

/**
 * Why `schema` cannot be used, or null when it can: the one check every route that takes a schema runs before it
 * stores, fills or forwards one (callers turn the reason into their own 400).
 */
export function schemaProblem(schema: unknown): string | null {
  if (!isContainer(schema) || Array.isArray(schema)) return 'a JSON schema must be an object';
  try {
    compileSchema(schema);
    return null;
  } catch (error) {
    return error instanceof SchemaError ? error.message : 'it could not be compiled';
  }
}

export function checkAgainstSchema(schema: Record<string, unknown>, value: unknown): SchemaCheck {
  const validate = compileSchema(schema);
  const valid = validate(value);
  const errors = (validate.errors ?? [])
    .slice(0, 10)
    .map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`.trim());
  return { valid: Boolean(valid), errors };
}

/** ajv's own messages are about the schema and safe to show (first line, capped); engine failures are not. */
function readable(error: unknown): string {
  if (error instanceof RangeError) return 'it is nested too deeply';
  const message = error instanceof Error ? error.message : '';
  const first = message.split('\n')[0]?.trim() ?? '';
  return first === '' ? 'it could not be compiled' : first.slice(0, 300);
}
