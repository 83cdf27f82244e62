/**
 * What one POST to `/mcp` may hold: a JSON-RPC batch of a hundred `prompts/get` with 600 KB arguments
 * answered 120 MB, and sixteen of them at once took the process to 3.4 GB. Three bounds stop that:
 *
 * - **Bytes in flight**, per caller and in all: a body's declared length (or, sent chunked, its read length) is
 *   reserved before it is parsed and given back when its response closes; past either bound the POST is a 429
 *   `queue_full` with `Retry-After`. One caller can still send one body of the full `PRISM_MAX_JSON_BYTES`.
 * - **Body size without a key**: 1 MiB (mcp.routes.ts); anonymous callers reach the hub tools only.
 * - **Batch size**: at most {@link MAX_BATCH} messages in one body.
 * - **Prompts count**: each `prompts/get` in a body is one request against the caller's rate limit, as a tool
 *   call is (their arguments are bounded in mcp-prompts.ts, so an answer is small).
 */
import { callerKey } from '../metering/caller-key';
import { QueueFullError, RateLimitExceededError } from '../metering/metering-errors';
import type { RateLimiter } from '../metering/rate-limiter';
import type { Principal } from '../domain/account';
import { AppError } from '../domain/errors';

/** Messages one JSON-RPC batch may hold. */
export const MAX_BATCH = 32;

export interface BodyBudget {
  /** Reserves `bytes` for `caller`; returns the release (idempotent), or null when over a bound. */
  reserve(caller: string, bytes: number): (() => void) | null;
  /** Bytes reserved now, in all. */
  readonly total: number;
}

/** Bounds: `perCaller` bytes for one caller, `total` for everyone (each at least one full body). */
export function createBodyBudget(limits: { perCaller: number; total: number }): BodyBudget {
  const byCaller = new Map<string, number>();
  let total = 0;
  return {
    reserve(caller, bytes) {
      const mine = byCaller.get(caller) ?? 0;
      // A body alone is always let in when nothing else is held, whatever its size (the parser's limit bounds it).
      if (mine > 0 && mine + bytes > limits.perCaller) return null;
      if (total > 0 && total + bytes > limits.total) return null;
      byCaller.set(caller, mine + bytes);
      total += bytes;
      let open = true;
      return () => {
        if (!open) return;
        open = false;
        total -= bytes;
        const left = (byCaller.get(caller) ?? 0) - bytes;
        if (left > 0) byCaller.set(caller, left);
        else byCaller.delete(caller);
      };
    },
    get total() {
      return total;
    },
  };
}

/** The refusal of a body over the budget. */
export const overBudget = (): AppError => new QueueFullError(5);

/**
 * Checks a parsed body: the batch size, and one rate-limit count per `prompts/get`.
 * @throws AppError 400 for a batch that is too large, 429 `rate_limit_exceeded` when the prompts use up the budget.
 */
export async function checkMessages(body: unknown, principal: Principal, limiter: RateLimiter): Promise<void> {
  const list = Array.isArray(body) ? (body as unknown[]) : [body];
  if (list.length > MAX_BATCH) {
    throw new AppError(400, {
      message: `Invalid request: a JSON-RPC batch may hold at most ${MAX_BATCH} messages; this one has ${list.length}.`,
      type: 'invalid_request_error',
    });
  }
  for (const message of list) {
    if ((message as { method?: unknown } | null)?.method !== 'prompts/get') continue;
    const decision = await limiter.check(callerKey(principal));
    if (decision.allowed) continue;
    throw new RateLimitExceededError({
      window: decision.label,
      retryAfterS: decision.retryAfterS,
      tier: principal.kind === 'user' ? principal.tier : 'anonymous',
      anonymous: principal.kind === 'anonymous',
    });
  }
}
