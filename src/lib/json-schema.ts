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
 *
 * Off the event loop: {@link prepareSchema} (awaited at the edge of a request, before its route runs) compiles a
 * schema larger than {@link IN_LINE_MAX_BYTES} on a structure worker (structure-pool.ts: heap cap and deadline)
 * and puts the result in the compiled-schema cache as standalone code, so the route's own synchronous compile
 * finds it there. A schema whose worker overran is remembered, and the route's compile refuses it with the limit
 * it hit instead of compiling it in-line. Small schemas compile in-line: cheaper than a round trip.
 */
import Ajv, { _, type ValidateFunction } from 'ajv';
import standaloneCode from 'ajv/dist/standalone';
import addFormats from 'ajv-formats';
import { createHash } from 'node:crypto';
import type { StructurePool } from './structure-pool';
import {
  currentWorkBudget,
  runWithWorkBudget,
  withWorkBudget,
  WorkBudget,
  WorkBudgetExceeded,
  type WorkerLimit,
  type WorkLimits,
} from './work-budget';

// Schemas are checked against the meta-schema by `metaProblem` (ajv's own check of `enum` uniqueness compares
// every value with every other: 20,000 values took 3.6 s), then compiled without a second check.
const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false, allowUnionTypes: true });
addFormats(ajv);

/** A compiled schema and what measuring it cost, so a cached one charges the request the same as a fresh one. */
interface Compiled {
  validate: ValidateFunction;
  cost: SchemaCost;
  /** What it holds: the schema's text, and for one compiled on a worker, its validator's code too. */
  bytes: number;
}
/** Compiled schemas by content hash, least recently used first; bounded in entries and in schema bytes. */
const cache = new Map<string, Compiled>();
const MAX_CACHED = 256;
const MAX_CACHED_BYTES = 32 * 1024 * 1024;
let cachedBytes = 0;
/**
 * Schemas a structure worker refused (by content hash): one whose worker overran, with the limit it hit, or one
 * it found unusable, with why; the route's compile refuses them without compiling. Bounded like the cache.
 */
const refused = new Map<string, { limit: WorkerLimit; allowed: number; until: number } | { problem: string }>();
/** How long an overrun is remembered: long enough to refuse a repeat at once, short enough to forgive a busy moment. */
const OVERRUN_MEMORY_MS = 10 * 60 * 1000;
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
  const refusal = refused.get(key);
  if (refusal && 'problem' in refusal) throw new SchemaError(refusal.problem);
  if (refusal && refusal.until > Date.now()) {
    throw new WorkBudgetExceeded(refusal.limit, refusal.allowed, budget?.caller ?? 'keyed');
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
  return remember(key, { validate, cost, bytes: text.length });
}

/** Puts `entry` in the cache, dropping the least recently used past its bounds. */
function remember(key: string, entry: Compiled): Compiled {
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
 * Schemas (as JSON text) at least this long are compiled on a structure worker by {@link prepareSchema}; shorter
 * ones in-line. Measured on the shared 2-core machine at load ~6 (docs/benchmarks-notes.md): 200 properties with
 * a format, a length and a description (16.8 KB) took 45–200 ms to compile in-line; through the pool the event
 * loop was held 8–13 ms (the code loaded) plus 3–14 ms for the route's first call, while the request's wall time
 * grew to 70–250 ms. Real extraction schemas of a few KB stay in-line (and compile once: cached by content).
 */
export const IN_LINE_MAX_BYTES = 16 * 1024;

let pool: StructurePool | null = null;
/** Schemas being compiled on a worker now, by content hash (one request's repeats wait for the same job). */
const preparing = new Map<string, Promise<void>>();

/** Uses `next` for {@link prepareSchema} (null: everything compiles in-line). Returns a function that undoes it. */
export function useStructurePool(next: StructurePool | null): () => void {
  pool = next;
  return () => {
    if (pool === next) pool = null;
  };
}

/**
 * Compiles `schema` on a structure worker when it is large (and not cached), so the route's own compile of it
 * (compileSchema / schemaProblem / checkAgainstSchema) is a cache hit and the event loop never runs ajv on it.
 * Never throws: a schema the worker found unusable or over the request's budget is left for the route's own
 * check to refuse (cheaply: its walk stops where the worker's did, before compiling), and one whose worker overran
 * is remembered, so the route refuses it with that limit. Awaited at the edge of a request, on its work budget.
 */
export async function prepareSchema(schema: unknown): Promise<void> {
  if (!pool || !isContainer(schema) || Array.isArray(schema)) return;
  const text = JSON.stringify(schema);
  if (text.length < IN_LINE_MAX_BYTES || text.length > pool.maxPayloadChars) return;
  try {
    // Bounded (it stops at the per-schema limit): a schema the route refuses for its size never reaches a worker.
    countRaw(schema);
  } catch {
    return;
  }
  const key = createHash('sha256').update(text).digest('hex');
  const refusal = refused.get(key);
  if (cache.has(key) || (refusal && ('problem' in refusal || refusal.until > Date.now()))) return;
  const running = preparing.get(key);
  if (running) return running;
  const budget = withWorkBudget(() => shadowOf(currentWorkBudget() as WorkBudget));
  const job = compileOnWorker(pool, key, text, budget).finally(() => preparing.delete(key));
  preparing.set(key, job);
  return job;
}

/** Fields that hold a caller's JSON schema, on a body and on the objects {@link schemasIn} looks into. */
const SCHEMA_FIELDS = ['json_schema', 'response_schema', 'schema'] as const;
/** Objects of a body that hold schema fields: `config` (generate, execute), `response_format` (chat), and MCP. */
const SCHEMA_HOLDERS = ['config', 'response_format', 'params', 'arguments'] as const;

/**
 * The JSON schemas a request body carries where the routes read them: `json_schema`, `response_schema` and
 * `schema` on the body, its `config` and `response_format` (`response_format.json_schema.schema`), and the
 * `params.arguments` of JSON-RPC messages (a batch's first 100). A few property reads: no walk of the body.
 */
export function schemasIn(body: unknown): unknown[] {
  const found: unknown[] = [];
  const visit = (holder: unknown, depth: number): void => {
    if (!isContainer(holder) || Array.isArray(holder) || depth > 3) return;
    const fields = holder;
    for (const field of SCHEMA_FIELDS) {
      const value = fields[field];
      if (!isContainer(value) || Array.isArray(value)) continue;
      const inner = value.schema;
      // `response_format.json_schema` is `{name, schema}`: the schema is inside it.
      found.push(field === 'json_schema' && isContainer(inner) && !Array.isArray(inner) ? inner : value);
    }
    for (const nested of SCHEMA_HOLDERS) visit(fields[nested], depth + 1);
  };
  for (const item of Array.isArray(body) ? body.slice(0, 100) : [body]) visit(item, 0);
  return found;
}

/** {@link prepareSchema} for each schema, one after another (the pool has few threads; a request waits its turn). */
export async function prepareSchemas(schemas: unknown[]): Promise<void> {
  for (const schema of schemas) await prepareSchema(schema);
}

/**
 * What the workers may still do for a request: a copy of its budget that each prepared schema spends, so one
 * request's schemas together get at most one budget of worker time (the route's own compile then charges the real
 * budget from the cache, once). Spent: nothing more is prepared; the route's own walk refuses the rest cheaply.
 */
const shadows = new WeakMap<WorkBudget, WorkBudget>();
function shadowOf(budget: WorkBudget): WorkBudget {
  let shadow = shadows.get(budget);
  if (!shadow) {
    shadow = new WorkBudget(budget.remaining(), budget.caller);
    shadows.set(budget, shadow);
  }
  return shadow;
}

async function compileOnWorker(on: StructurePool, key: string, text: string, budget: WorkBudget): Promise<void> {
  // Spent (a schema was over what was left, or the request's schemas add up past it): prepare nothing more.
  if (Object.values(budget.remaining()).some((left) => left === 0)) return;
  let answer: WorkerCompiled;
  try {
    answer = await on.run<WorkerCompiled>(
      'compile-schema',
      { text, remaining: budget.remaining(), caller: budget.caller },
      budget.caller,
    );
  } catch (error) {
    if (error instanceof WorkBudgetExceeded && (error.limit === 'worker_ms' || error.limit === 'worker_heap_mb')) {
      refuse(key, { limit: error.limit, allowed: error.allowed, until: Date.now() + OVERRUN_MEMORY_MS });
    }
    // Anything else (a worker that could not start): the route compiles in-line, as without a pool.
    return;
  }
  if (answer.kind === 'refused') refuse(key, { problem: answer.problem });
  if (answer.kind === 'over_budget') exhaust(budget);
  if (answer.kind !== 'compiled') return;
  try {
    charge(budget, answer.cost, text.length);
  } catch {
    // the shadow ran out with this schema: it is still usable, the route's own charge decides
  }
  if (cache.has(key)) return;
  // Counted with its code (V8 keeps a function's source): 256 large validators would otherwise hold gigabytes.
  remember(key, {
    validate: loadStandalone(answer.source),
    cost: answer.cost,
    bytes: text.length + answer.source.length,
  });
}

/** Spends what is left of `budget`'s schema count, so nothing more is prepared on it. */
function exhaust(budget: WorkBudget): void {
  try {
    budget.spend('schemas', budget.remaining().schemas + 1);
  } catch {
    // spent, as intended
  }
}

function refuse(
  key: string,
  refusal: { limit: WorkerLimit; allowed: number; until: number } | { problem: string },
): void {
  refused.set(key, refusal);
  for (const oldKey of refused.keys()) {
    if (refused.size <= MAX_CACHED) break;
    refused.delete(oldKey);
  }
}

/** Shape checks a structure worker made (by content hash): the problem (or null) and what the walk cost. */
const shapes = new Map<string, { problem: string | null; cost: SchemaCost }>();

const hashOf = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * {@link schemaShapeProblem} for a skill bundle's schemas, on a structure worker: each large one (see
 * {@link prepareSchema}) is measured and meta-checked there and the answer kept, so the bundle parser's own check
 * finds it and charges its cost without walking it again. Never throws (the parser's check decides); the
 * request's schemas together get at most one budget of worker time.
 */
export async function prepareSchemaShapes(schemas: unknown[]): Promise<void> {
  for (const schema of schemas) {
    const on = pool;
    if (!on || !isContainer(schema) || Array.isArray(schema)) continue;
    const text = JSON.stringify(schema);
    if (text.length < IN_LINE_MAX_BYTES || text.length > on.maxPayloadChars) continue;
    try {
      countRaw(schema);
    } catch {
      continue;
    }
    const key = hashOf(text);
    if (shapes.has(key)) continue;
    const budget = withWorkBudget(() => shadowOf(currentWorkBudget() as WorkBudget));
    if (Object.values(budget.remaining()).some((left) => left === 0)) return;
    let answer: WorkerShaped;
    try {
      answer = await on.run<WorkerShaped>(
        'shape-schema',
        { text, remaining: budget.remaining(), caller: budget.caller },
        budget.caller,
      );
    } catch {
      return; // an overrun worker: the parser checks in-line (bounded by the budget)
    }
    if (answer.kind === 'over_budget') return exhaust(budget);
    try {
      charge(budget, answer.cost, text.length);
    } catch {
      // the shadow ran out with this schema: the parser's own charge decides
    }
    shapes.set(key, { problem: answer.problem, cost: answer.cost });
    for (const oldKey of shapes.keys()) {
      if (shapes.size <= MAX_CACHED) break;
      shapes.delete(oldKey);
    }
  }
}

type WorkerShaped = { kind: 'shaped'; problem: string | null; cost: SchemaCost } | { kind: 'over_budget' };

const NO_COST: SchemaCost = { expandedNodes: 0, enumValues: 0, stringChars: 0, refs: 0 };

/** Runs on a structure worker: {@link schemaShapeProblem} of `text` on a budget of what the request has left. */
export function shapeInWorker(payload: {
  text: string;
  remaining: WorkLimits;
  caller: 'anonymous' | 'keyed';
}): WorkerShaped {
  const schema = JSON.parse(payload.text) as Record<string, unknown>;
  return runWithWorkBudget(new WorkBudget(payload.remaining, payload.caller), (): WorkerShaped => {
    try {
      currentWorkBudget()?.spend('bytes', payload.text.length);
      const { cost } = walkSchema(schema);
      return { kind: 'shaped', problem: metaProblem(withKnownDialect(schema)), cost };
    } catch (error) {
      if (error instanceof WorkBudgetExceeded) return { kind: 'over_budget' };
      if (error instanceof SchemaError) return { kind: 'shaped', problem: error.message, cost: NO_COST };
      if (error instanceof RangeError) return { kind: 'shaped', problem: 'it is nested too deeply', cost: NO_COST };
      throw error;
    }
  });
}

/** What a structure worker answers for a schema: its compiled code and cost, or that the route must refuse it. */
type WorkerCompiled =
  | { kind: 'compiled'; source: string; cost: SchemaCost }
  | { kind: 'refused'; problem: string }
  | { kind: 'over_budget' };

/**
 * Runs on a structure worker: measures `text` (a schema as JSON) on a budget of what the request has left, checks
 * it against the meta-schema and compiles it, returning the validator as standalone code. Each job gets an ajv of
 * its own (the same options, keeping the validator's source): one instance kept across jobs grew by what it had
 * compiled, past a 128 MB heap by the fourth 1,900-property schema, even with each schema removed again.
 */
export function compileInWorker(payload: {
  text: string;
  remaining: WorkLimits;
  caller: 'anonymous' | 'keyed';
}): WorkerCompiled {
  const worker = new Ajv({
    strict: false,
    allErrors: true,
    validateSchema: false,
    allowUnionTypes: true,
    code: { source: true, formats: _`require("ajv-formats/dist/formats").fullFormats` },
  });
  addFormats(worker);
  const schema = JSON.parse(payload.text) as Record<string, unknown>;
  return runWithWorkBudget(new WorkBudget(payload.remaining, payload.caller), (): WorkerCompiled => {
    try {
      currentWorkBudget()?.spend('bytes', payload.text.length);
      const { cost } = walkSchema(schema);
      const known = withKnownDialect(schema);
      const problem = metaProblem(known);
      if (problem) return { kind: 'refused', problem };
      const validate = worker.compile(known);
      return { kind: 'compiled', source: standaloneCode(worker, validate), cost };
    } catch (error) {
      if (error instanceof WorkBudgetExceeded) return { kind: 'over_budget' };
      // The same reason the route's own compile would give (ajv's first line, or the walk's SchemaError).
      return { kind: 'refused', problem: error instanceof SchemaError ? error.message : readable(error) };
    }
  });
}

/** A validator from a worker's standalone code (CommonJS: it requires ajv's runtime and ajv-formats' formats). */
function loadStandalone(source: string): ValidateFunction {
  const module = { exports: {} as unknown };
  // The code is ajv's own output for a schema it compiled, the same code ajv would otherwise build here.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const load = new Function('require', 'module', 'exports', source) as (
    require: NodeJS.Require,
    module: { exports: unknown },
    exports: unknown,
  ) => void;
  load(require, module, module.exports);
  return module.exports as ValidateFunction;
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
      const shaped = text.length >= IN_LINE_MAX_BYTES ? shapes.get(hashOf(text)) : undefined;
      if (shaped) {
        // Checked on a structure worker (prepareSchemaShapes): charged what the walk costs, not walked again.
        charge(currentWorkBudget(), shaped.cost, text.length);
        return shaped.problem;
      }
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
