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
 *
 * Each walk also charges the request's work budget (lib/work-budget.ts): schemas, schema objects once expanded,
 * enum values, characters reached and `$ref`s followed add up across every schema of a request, so many schemas
 * within the per-schema limits cannot together stall the server.
 */
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { createHash } from 'node:crypto';
import { currentWorkBudget, withWorkBudget, WorkBudgetExceeded, type WorkBudget } from './work-budget';

// Schemas are checked against the meta-schema by `metaProblem` (ajv's own check of `enum` uniqueness compares
// every value with every other: 20,000 values took 3.6 s), then compiled without a second check.
const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false, allowUnionTypes: true });
addFormats(ajv);

/** A compiled schema and what measuring it cost, so a cached one charges the request the same as a fresh one. */
interface Compiled {
  validate: ValidateFunction;
  cost: SchemaCost;
  bytes: number;
}
/** Compiled schemas by content hash, least recently used first; bounded in entries and in schema bytes. */
const cache = new Map<string, Compiled>();
const MAX_CACHED = 256;
const MAX_CACHED_BYTES = 32 * 1024 * 1024;
let cachedBytes = 0;
/** Enums longer than this have their uniqueness checked here (a set) instead of pairwise by the meta-schema. */
const PAIRWISE_ENUM_MAX = 64;

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

/** What walking a schema costs in the request's work budget (lib/work-budget.ts). */
interface SchemaCost {
  expandedNodes: number;
  enumValues: number;
  stringChars: number;
  refs: number;
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
  return withWorkBudget(() => {
    const { nodes, cost } = walkSchema(schema);
    return { nodes, expandedNodes: cost.expandedNodes };
  });
}

/** {@link measureSchema}, charging the current work budget as it goes (so a spent budget stops the walk). */
function walkSchema(schema: unknown): { nodes: number; cost: SchemaCost } {
  if (!isContainer(schema) || Array.isArray(schema)) throw new SchemaError('a JSON schema must be an object');
  const budget = currentWorkBudget();
  budget?.spend('schemas', 1);
  const nodes = countRaw(schema);
  const cost: SchemaCost = { expandedNodes: 0, enumValues: 0, stringChars: 0, refs: 0 };
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
    budget?.spend('properties', 1);
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
    const chars = stringChars(entries);
    cost.stringChars += chars;
    budget?.spend('string_chars', chars);
    // Pushed last-first so the walk (and the first problem it names) follows the schema's own order.
    for (const [key, child] of entries.reverse()) {
      const pointer = `${frame.pointer}/${escapePointer(key)}`;
      if (key === 'enum' && Array.isArray(child) && !Array.isArray(frame.value)) {
        cost.enumValues += child.length;
        budget?.spend('enum_values', child.length);
      }
      if (key === '$ref' && typeof child === 'string' && !Array.isArray(frame.value)) {
        cost.refs += 1;
        budget?.spend('refs_expanded', 1);
        stack.push(follow(schema, child, frame.pointer, frame.depth + 1, active));
      } else if ((key === '$dynamicRef' || key === '$recursiveRef') && typeof child === 'string') {
        throw new SchemaError(`${key} (at ${frame.pointer}) is not supported; use a local "$ref": "#/$defs/..."`);
      } else if (isContainer(child)) {
        stack.push({ value: child, pointer, depth: frame.depth + 1, exit: false });
      }
    }
  }
  cost.expandedNodes = expanded;
  return { nodes, cost };
}

/** Characters of the keys and string values of one schema object (or array) itself, not of its children. */
function stringChars(entries: [string, unknown][]): number {
  let chars = 0;
  for (const [key, value] of entries) {
    chars += key.length;
    if (typeof value === 'string') chars += value.length;
  }
  return chars;
}

/** Charges `cost` to the current budget: a schema found in the cache costs the request what walking it would. */
function charge(budget: WorkBudget | undefined, cost: SchemaCost, bytes: number): void {
  if (!budget) return;
  budget.spend('bytes', bytes);
  budget.spend('schemas', 1);
  budget.spend('properties', cost.expandedNodes);
  budget.spend('enum_values', cost.enumValues);
  budget.spend('string_chars', cost.stringChars);
  budget.spend('refs_expanded', cost.refs);
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
 * Measures `schema` against the budget, then compiles it (cached by content; a cached schema is charged to the
 * request's work budget like a fresh one, without walking it again).
 * @throws SchemaError with a readable reason when it is over the budget or not a usable JSON schema.
 * @throws WorkBudgetExceeded when the request's work budget is spent.
 */
export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  return withWorkBudget(() => compiled(schema).validate);
}

function compiled(schema: Record<string, unknown>): Compiled {
  const text = JSON.stringify(schema);
  const budget = currentWorkBudget();
  const key = createHash('sha256').update(text).digest('hex');
  const hit = cache.get(key);
  if (hit) {
    charge(budget, hit.cost, text.length);
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  budget?.spend('bytes', text.length);
  const { cost } = walkSchema(schema);
  const known = withKnownDialect(schema);
  const problem = metaProblem(known);
  if (problem) throw new SchemaError(problem);
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(known);
  } catch (error) {
    throw new SchemaError(readable(error));
  }
  const entry: Compiled = { validate, cost, bytes: text.length };
  cache.set(key, entry);
  cachedBytes += entry.bytes;
  for (const [oldKey, old] of cache) {
    if (cache.size <= MAX_CACHED && cachedBytes <= MAX_CACHED_BYTES) break;
    cache.delete(oldKey);
    cachedBytes -= old.bytes;
  }
  return entry;
}

/**
 * Why `schema` breaks the meta-schema, or null. Long `enum`s are checked for duplicates here with a set (linear)
 * and shown to the meta-schema as their first value, since its `uniqueItems` compares every pair.
 */
function metaProblem(schema: Record<string, unknown>): string | null {
  let duplicate: string | null = null;
  const shown = shrinkEnums(schema, (at, values) => {
    const seen = new Set<string>();
    for (const value of values) {
      const key = typeof value === 'string' ? `s${value}` : `j${JSON.stringify(value)}`;
      if (seen.has(key)) {
        duplicate ??= `schema is invalid: data${at}/enum must NOT have duplicate items (${JSON.stringify(value).slice(0, 100)})`;
        return;
      }
      seen.add(key);
    }
  });
  if (duplicate) return duplicate;
  if (ajv.validateSchema(shown as Record<string, unknown>) === true) return null;
  return readable(new Error(`schema is invalid: ${ajv.errorsText(ajv.errors)}`));
}

/** A copy of `schema` whose enums longer than {@link PAIRWISE_ENUM_MAX} are cut to one value (after `check`). */
function shrinkEnums(value: unknown, check: (at: string, values: unknown[]) => void, at = ''): unknown {
  if (!isContainer(value)) return value;
  if (Array.isArray(value)) return value.map((v, i) => shrinkEnums(v, check, `${at}/${i}`));
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === 'enum' && Array.isArray(child) && child.length > PAIRWISE_ENUM_MAX) {
      check(at, child);
      out[key] = child.slice(0, 1);
    } else {
      out[key] = shrinkEnums(child, check, `${at}/${escapePointer(key)}`);
    }
  }
  return out;
}

/**
 * Measures `schema` and checks it against the meta-schema without compiling it: what a skill bundle's schemas
 * get when the bundle is read, so a bundle of many schemas is not compiled up front; each is compiled (once,
 * cached) when something first validates with it.
 * @returns why it cannot be used, or null.
 * @throws WorkBudgetExceeded when the request's work budget is spent.
 */
export function schemaShapeProblem(schema: unknown): string | null {
  if (!isContainer(schema) || Array.isArray(schema)) return 'a JSON schema must be an object';
  return withWorkBudget(() => {
    try {
      const text = JSON.stringify(schema);
      currentWorkBudget()?.spend('bytes', text.length);
      walkSchema(schema);
      return metaProblem(withKnownDialect(schema));
    } catch (error) {
      if (error instanceof SchemaError) return error.message;
      if (error instanceof RangeError) return 'it is nested too deeply';
      throw error;
    }
  });
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
    if (error instanceof WorkBudgetExceeded) throw error;
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
