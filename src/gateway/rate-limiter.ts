/**
 * Per-caller request budgets: 60 per minute and 1000 per hour by default, one budget shared by chat completions,
 * embeddings and the public compat routes; a tier may have windows of its own (settings).
 *
 * Windows are FIXED and aligned to the clock (a minute window is [hh:mm:00, hh:mm+1:00)), the Envoy / Redis
 * `INCR`+`EXPIRE` scheme: O(1) per call, exact across replicas once the store is shared, and a wait of one window
 * length always finds the window reset. The trade-off is a burst of up to 2× the limit across a boundary.
 *
 * The store does one atomic check-and-increment over every window of a caller: either each window has room and
 * each is counted, or nothing is counted. Rejected calls do not count. The memory store evicts callers idle for
 * longer than the longest window (their counts would have reset anyway) and holds at most `maxKeys` callers.
 */

export type WindowName = 'minute' | 'hour';

export interface RateWindow {
  name: WindowName;
  lengthS: number;
  limit: number;
}

/** The spec's limits (Limits table): 60 per minute and 1000 per hour per caller. */
export const GATEWAY_WINDOWS: readonly RateWindow[] = [
  { name: 'minute', lengthS: 60, limit: 60 },
  { name: 'hour', lengthS: 3600, limit: 1000 },
];

/** One window's state after a consume. */
export interface WindowState {
  /** Requests counted in the current window (including this one when allowed). */
  count: number;
  /** Epoch ms when the current window ends. */
  resetAtMs: number;
}

/** Where counts live: memory for one replica, Redis (a Lua script over `{caller}`-tagged keys) for several. */
export interface RateLimitStore {
  /**
   * Atomically: when every window has room, count one request in each. Returns whether it was counted and each
   * window's state, in the order of `windows`.
   */
  consume(
    key: string,
    windows: readonly RateWindow[],
    nowMs: number,
  ): Promise<{ allowed: boolean; states: WindowState[] }>;
}

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

interface Entry {
  /** Per window: the index (`floor(now / length)`) of the window being counted, and its count. */
  index: number[];
  count: number[];
  lastMs: number;
}

export interface MemoryRateLimitStoreOptions {
  /** Most callers held at once; beyond it the least recently seen is forgotten (its counts restart). */
  maxKeys?: number;
}

/** A one-replica store: a Map in least-recently-seen order, swept a little on every call (no timers). */
export function createMemoryRateLimitStore(
  options: MemoryRateLimitStoreOptions = {},
): RateLimitStore & { size(): number } {
  const maxKeys = options.maxKeys ?? 200_000;
  const entries = new Map<string, Entry>();

  const sweep = (nowMs: number, idleMs: number): void => {
    for (let i = 0; i < 2; i += 1) {
      const first = entries.entries().next();
      if (first.done) return;
      const [key, entry] = first.value;
      if (nowMs - entry.lastMs < idleMs && entries.size <= maxKeys) return;
      entries.delete(key);
    }
  };

  return {
    async consume(key, windows, nowMs) {
      let longestMs = 0;
      for (const w of windows) longestMs = Math.max(longestMs, w.lengthS * 1000);
      let entry = entries.get(key);
      if (entry) {
        entries.delete(key);
      } else {
        entry = { index: windows.map(() => -1), count: windows.map(() => 0), lastMs: nowMs };
      }
      entries.set(key, entry);
      entry.lastMs = nowMs;

      let allowed = true;
      for (let i = 0; i < windows.length; i += 1) {
        const lengthMs = (windows[i] as RateWindow).lengthS * 1000;
        const index = Math.floor(nowMs / lengthMs);
        if (entry.index[i] !== index) {
          entry.index[i] = index;
          entry.count[i] = 0;
        }
        if ((entry.count[i] as number) >= (windows[i] as RateWindow).limit) allowed = false;
      }
      const states: WindowState[] = [];
      for (let i = 0; i < windows.length; i += 1) {
        if (allowed) entry.count[i] = (entry.count[i] as number) + 1;
        const lengthMs = (windows[i] as RateWindow).lengthS * 1000;
        states.push({ count: entry.count[i] as number, resetAtMs: ((entry.index[i] as number) + 1) * lengthMs });
      }
      sweep(nowMs, longestMs);
      return { allowed, states };
    },
    size: () => entries.size,
  };
}
