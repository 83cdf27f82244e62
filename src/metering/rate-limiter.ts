/**
 * Per-caller request budgets: 60 per minute and 1000 per hour by default, one budget shared by chat completions,
 * embeddings and the public compat routes; a tier may have windows of its own (settings).
 *
 * Windows are FIXED and aligned to the clock (a minute window is [hh:mm:00, hh:mm+1:00)), the Envoy / Redis
 * `INCR`+`EXPIRE` scheme: O(1) per call, exact across replicas once the store is shared, and a wait of one window
 * length always finds the window reset. The trade-off is a burst of up to 2× the limit across a boundary.
 *
 * The store (the `RateLimitStore` port of ports.ts) does one atomic check-and-increment over every window of a
 * caller: either each window has room and each is counted, or nothing is counted. Rejected calls do not count. The
 * one-replica store is in src/backend/local/metering-stores.ts.
 */
import type { RateLimitStore, RateWindow, WindowName, WindowState } from './ports';

/** The spec's limits (Limits table): 60 per minute and 1000 per hour per caller. */
export const GATEWAY_WINDOWS: readonly RateWindow[] = [
  { name: 'minute', lengthS: 60, limit: 60 },
  { name: 'hour', lengthS: 3600, limit: 1000 },
];

export interface RateLimitDecision {
  allowed: boolean;
  /** The binding window: the longest exhausted one when rejected, else the one closest to running out. */
  window: WindowName;
  limit: number;
  remaining: number;
  /** Seconds until the binding window resets (rounded up). */
  resetS: number;
  /**
   * 0 when allowed; otherwise the seconds until the binding (longest exhausted) window resets, at least 1: the
   * same moment `x-ratelimit-reset-requests` names, and a wait of it always finds room (windows are fixed).
   */
  retryAfterS: number;
  /** People's wording of the binding window: `60 per 1 minute`. */
  label: string;
}

export interface RateLimiter {
  /**
   * Count one request for `key` (e.g. `ip:203.0.113.7` or `user:<id>`) and say whether it may proceed. `tier`
   * (`anonymous`, `free`, `pro`, `enterprise`) picks that tier's windows when it has its own.
   */
  check(key: string, nowMs?: number, tier?: string): Promise<RateLimitDecision>;
}

export function createRateLimiter(
  store: RateLimitStore,
  defaultWindows: readonly RateWindow[] = GATEWAY_WINDOWS,
  windowsByTier: Readonly<Record<string, readonly RateWindow[]>> = {},
): RateLimiter {
  for (const windows of [defaultWindows, ...Object.values(windowsByTier)]) {
    if (windows.length === 0) throw new RangeError('at least one window is required');
  }
  return {
    async check(key, nowMs = Date.now(), tier) {
      const windows = (tier !== undefined ? windowsByTier[tier] : undefined) ?? defaultWindows;
      const { allowed, states } = await store.consume(key, windows, nowMs);
      let pick = 0;
      for (let i = 0; i < windows.length; i += 1) {
        const w = windows[i] as RateWindow;
        const s = states[i] as WindowState;
        const best = windows[pick] as RateWindow;
        const bestState = states[pick] as WindowState;
        const exhausted = s.count >= w.limit;
        if (!allowed) {
          if (exhausted && (bestState.count < best.limit || w.lengthS > best.lengthS)) pick = i;
        } else if (w.limit - s.count < best.limit - bestState.count) {
          pick = i;
        }
      }
      const w = windows[pick] as RateWindow;
      const s = states[pick] as WindowState;
      const resetS = Math.max(0, Math.ceil((s.resetAtMs - nowMs) / 1000));
      return {
        allowed,
        window: w.name,
        limit: w.limit,
        remaining: Math.max(0, w.limit - s.count),
        resetS,
        retryAfterS: allowed ? 0 : Math.max(1, resetS),
        label: `${w.limit} per 1 ${w.name}`,
      };
    },
  };
}

/** The `x-ratelimit-*` headers (OpenAI names) for a decision, to set before any body or SSE byte. */
export function rateLimitHeaders(d: RateLimitDecision): Record<string, string> {
  return {
    'x-ratelimit-limit-requests': String(d.limit),
    'x-ratelimit-remaining-requests': String(d.remaining),
    'x-ratelimit-reset-requests': `${d.resetS}s`,
  };
}
