/**
 * One work budget per request: what parsing, compiling, validating and filling a caller's structure may cost,
 * counted in what the cost actually grows with (schemas, properties across all of them, enum values, characters
 * reached through `$ref`s, references expanded, bytes of YAML and bundle entries), not in objects per schema.
 *
 * Round two bounded each parser on its own; a request could still send 150,000 enum values (ajv's meta-schema
 * checks them pairwise), one long description referenced 2,000 times, or 600 bundle schemas of 2,000 properties
 * each, and every one was within the per-schema bounds. The budget adds those up per request.
 *
 * The HTTP adapter (and `/mcp`, per POST) starts a budget for each request once its body is read (anonymous
 * callers get the smaller one); the code that does the work calls {@link spendWork}, which reads the budget from the async context (like
 * work-tenant.ts carries the tenant), so no parser API threads it. Work outside any request (jobs resumed after a
 * restart, start-up, `prism` commands) spends a fresh keyed-size budget per top-level call
 * ({@link withWorkBudget}), so it is bounded the same way.
 *
 * Spent → {@link WorkBudgetExceeded}, which the HTTP error handler renders as 413 `work_budget_exceeded` naming
 * the limit and its setting. Cost: one small object per request and an integer add per charge.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** What a request's work is counted in. */
export const WORK_KINDS = [
  /** Bytes of caller structure parsed: schemas (as JSON), YAML documents, bundle entries. */
  'bytes',
  /** JSON schemas checked or compiled (a bundle's `schemas/*.json` each count). */
  'schemas',
  /** Schema objects across all schemas of the request, counted once per `$ref` expansion. */
  'properties',
  /** Values of `enum` (and `const`) across all schemas. */
  'enum_values',
  /** Characters of the strings (descriptions, titles, enum values) the expanded schemas hold. */
  'string_chars',
  /** `$ref`s followed while expanding schemas. */
  'refs_expanded',
] as const;
export type WorkKind = (typeof WORK_KINDS)[number];
export type WorkLimits = Record<WorkKind, number>;

/** Defaults: a keyed request fits any real extraction schema many times over; anonymous is a playground. */
export const DEFAULT_WORK_LIMITS: { anonymous: WorkLimits; keyed: WorkLimits } = {
  anonymous: {
    bytes: 2 * 1024 * 1024,
    schemas: 20,
    properties: 4000,
    enum_values: 2000,
    string_chars: 1_000_000,
    refs_expanded: 4000,
  },
  keyed: {
    bytes: 16 * 1024 * 1024,
    schemas: 200,
    properties: 20_000,
    enum_values: 20_000,
    string_chars: 8_000_000,
    refs_expanded: 40_000,
  },
};

/**
 * What a structure worker (lib/structure-pool.ts) may use on one piece of work: its wall-clock deadline and its
 * heap. Not counted per request: a worker that overruns either is stopped, whatever the budget had left.
 */
export type WorkerLimit = 'worker_ms' | 'worker_heap_mb';

const WORKER_LIMIT_SETTINGS: Record<WorkerLimit, string> = {
  worker_ms: 'PRISM_STRUCTURE_WORKER_DEADLINE_MS',
  worker_heap_mb: 'PRISM_STRUCTURE_WORKER_HEAP_MB',
};

/** The budget is spent: `limit` is the kind that ran out, `allowed` its size for this caller. */
export class WorkBudgetExceeded extends Error {
  constructor(
    readonly limit: WorkKind | WorkerLimit,
    readonly allowed: number,
    readonly caller: 'anonymous' | 'keyed',
  ) {
    super(
      limit === 'worker_ms' || limit === 'worker_heap_mb'
        ? `The request needs more work than its budget allows: one of its structures needed more than ${allowed} ` +
            `${limit === 'worker_ms' ? 'ms' : 'MB of memory'} to check (${WORKER_LIMIT_SETTINGS[limit]}); send ` +
            'smaller or fewer schemas' +
            (caller === 'anonymous' ? ', or use an API key' : '')
        : `The request needs more work than its budget allows: more than ${allowed} ${limit.replace(/_/g, ' ')} ` +
            `(the ${caller} limit, PRISM_WORK_BUDGET_${caller.toUpperCase()}); send smaller or fewer schemas` +
            (caller === 'anonymous' ? ', or use an API key' : ''),
    );
    this.name = 'WorkBudgetExceeded';
  }
}

/** What one request may still spend. */
export class WorkBudget {
  private readonly spent: Record<WorkKind, number> = {
    bytes: 0,
    schemas: 0,
    properties: 0,
    enum_values: 0,
    string_chars: 0,
    refs_expanded: 0,
  };

  constructor(
    readonly limits: WorkLimits,
    readonly caller: 'anonymous' | 'keyed',
  ) {}

  /** Charges `units` of `kind`; throws once the request has spent more than its limit. */
  spend(kind: WorkKind, units: number): void {
    const total = this.spent[kind] + units;
    this.spent[kind] = total;
    if (total > this.limits[kind]) throw new WorkBudgetExceeded(kind, this.limits[kind], this.caller);
  }

  /** What is left of each kind (a structure worker walks a schema on a copy this size). */
  remaining(): WorkLimits {
    const left = { ...this.limits };
    for (const kind of WORK_KINDS) left[kind] = Math.max(0, this.limits[kind] - this.spent[kind]);
    return left;
  }

  /** Units of each kind spent so far (the cost suite compares these across input sizes). */
  usage(): Readonly<Record<WorkKind, number>> {
    return { ...this.spent };
  }
}

/** The budget of one request from a caller with (`keyed`) or without an API key. */
export function requestWorkBudget(limits: { anonymous: WorkLimits; keyed: WorkLimits }, keyed: boolean): WorkBudget {
  return new WorkBudget(keyed ? limits.keyed : limits.anonymous, keyed ? 'keyed' : 'anonymous');
}

const storage = new AsyncLocalStorage<WorkBudget>();
let fallbackLimits: WorkLimits = DEFAULT_WORK_LIMITS.keyed;

/** The limits work outside any request gets (the container sets the configured keyed limits at start). */
export function setFallbackWorkLimits(limits: WorkLimits): void {
  fallbackLimits = limits;
}

/** Runs `work` (and all it awaits) on `budget`. */
export function runWithWorkBudget<T>(budget: WorkBudget, work: () => T): T {
  return storage.run(budget, work);
}

/** The budget of the request running now, if any. */
export function currentWorkBudget(): WorkBudget | undefined {
  return storage.getStore();
}

/**
 * Runs `work` on the current request's budget, or on a fresh keyed-size one when there is none (a job, a
 * command): every top-level parse is bounded either way.
 */
export function withWorkBudget<T>(work: () => T): T {
  return storage.getStore() ? work() : storage.run(new WorkBudget(fallbackLimits, 'keyed'), work);
}

/**
 * Runs `work` on a fresh keyed-size budget of its own, whatever the request's: for Prism checking its own output
 * against a schema the request was already charged for (so the check is bounded, but not billed twice).
 */
export function withOwnWorkBudget<T>(work: () => T): T {
  return storage.run(new WorkBudget(fallbackLimits, 'keyed'), work);
}

/** Charges the current budget (see {@link withWorkBudget}: callers that parse wrap their walk in it). */
export function spendWork(kind: WorkKind, units: number): void {
  storage.getStore()?.spend(kind, units);
}

/**
 * About how many bytes `value` would take as JSON (strings and keys by length, other leaves a few bytes), by an
 * iterative walk without building the text: what a caller's already-parsed arguments charge as `bytes`.
 */
export function structureBytes(value: unknown): number {
  let bytes = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next === 'string') bytes += next.length + 2;
    else if (Array.isArray(next)) {
      bytes += 2 + next.length;
      for (const item of next) stack.push(item);
    } else if (typeof next === 'object' && next !== null) {
      bytes += 2;
      for (const [key, item] of Object.entries(next)) {
        bytes += key.length + 4;
        stack.push(item);
      }
    } else bytes += 5;
  }
  return bytes;
}

/** Parses `kind=n,kind=n` over `base` (for configuration); throws with a readable reason. */
export function parseWorkLimits(text: string, base: WorkLimits): WorkLimits {
  const limits = { ...base };
  for (const pair of text.split(',').map((p) => p.trim())) {
    if (pair === '') continue;
    const [kind, count] = pair.split('=').map((p) => p.trim());
    if (!WORK_KINDS.includes(kind as WorkKind) || !/^\d+$/.test(count ?? '')) {
      throw new Error(`expected kind=count pairs (kinds: ${WORK_KINDS.join(', ')}), got '${pair}'`);
    }
    limits[kind as WorkKind] = Number(count);
  }
  return limits;
}
