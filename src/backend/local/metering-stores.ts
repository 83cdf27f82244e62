/**
 * The one-replica implementations of metering's ports (ports.ts): plain Maps, swept as they go (no timers), each
 * bounded. The container uses them when no shared store is configured.
 */
import type { GuestSpendStore, HoldStore, RateLimitStore, RateWindow, WindowState } from '../../metering/ports';

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

/** One replica's counters for the current UTC day. */
export function createMemoryGuestSpendStore(): GuestSpendStore & { size(): number } {
  let day = -1;
  let counts = new Map<string, number>();
  const roll = (nowMs: number): void => {
    const today = Math.floor(nowMs / 86_400_000);
    if (today !== day) {
      day = today;
      counts = new Map();
    }
  };
  return {
    async spent(keys, nowMs) {
      roll(nowMs);
      return keys.map((k) => counts.get(k) ?? 0);
    },
    async add(keys, micros, nowMs) {
      roll(nowMs);
      for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + micros);
    },
    size: () => counts.size,
  };
}

/** Holds of this replica: a Map of key to micro-dollars, an entry dropped when its hold reaches zero. */
export function createMemoryHoldStore(): HoldStore & { size(): number } {
  const held = new Map<string, number>();
  return {
    async held(keys) {
      return keys.map((k) => held.get(k) ?? 0);
    },
    async add(keys, micros) {
      for (const k of keys) held.set(k, (held.get(k) ?? 0) + micros);
    },
    remove(keys, micros) {
      for (const k of keys) {
        const left = (held.get(k) ?? 0) - micros;
        if (left > 0) held.set(k, left);
        else held.delete(k);
      }
    },
    size: () => held.size,
  };
}
