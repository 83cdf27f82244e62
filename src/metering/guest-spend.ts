/**
 * The guest playground's daily spend cap: $0.50 per day per client IP and, separately, per browser fingerprint.
 *
 * Either counter can block. Days are UTC calendar days; a counter from an earlier day counts as zero, and the
 * memory store drops all of yesterday's counters at the first call of a new day, so it holds at most one day of
 * guests. A shared store (Redis `INCRBY` on `guest:<day>:<key>` with a two-day `EXPIRE`) fits the same interface.
 */
import { GuestSpendCapReachedError } from './metering-errors';

/** Per-key micro-dollar counters for one UTC day. */
export interface GuestSpendStore {
  /** Micro-dollars spent today under each key (0 for unknown keys), in order. */
  spent(keys: readonly string[], nowMs: number): Promise<number[]>;
  /** Add `micros` to each key's count for today. */
  add(keys: readonly string[], micros: number, nowMs: number): Promise<void>;
}

/** Who a guest is: the client address key and, when the browser sent one, its fingerprint. */
export interface GuestIdentity {
  clientIp: string;
  fingerprint: string | null;
}

export interface GuestSpendGuard {
  /** @throws AppError 402 `guest_spend_cap` when the IP or the fingerprint has used up today's cap. */
  check(guest: GuestIdentity, nowMs?: number): Promise<void>;
  record(guest: GuestIdentity, micros: number, nowMs?: number): Promise<void>;
  /**
   * Holds `micros` of today's cap for a call about to run (counted until {@link release}).
   * @throws AppError 402 `guest_spend_cap` when spent + held + `micros` would pass the cap for the IP or fingerprint.
   * Callers run holds one at a time (the biller does), so two holds never both see the same room.
   */
  hold(guest: GuestIdentity, micros: number, nowMs?: number): Promise<void>;
  release(guest: GuestIdentity, micros: number): void;
}

/** The spec's guest cap: $0.50 per day. */
export const GUEST_DAILY_CAP_MICROS = 500_000;

export function createGuestSpendGuard(
  store: GuestSpendStore,
  options: { capMicros?: number; upgradeHint?: string } = {},
): GuestSpendGuard {
  const cap = options.capMicros ?? GUEST_DAILY_CAP_MICROS;
  const hint = options.upgradeHint ?? 'Sign up for an API key to keep going.';
  const keysOf = (g: GuestIdentity): string[] =>
    g.fingerprint ? [`ip:${g.clientIp}`, `fp:${g.fingerprint}`] : [`ip:${g.clientIp}`];
  /** Micro-dollars held per counter key by calls still running (this replica's). */
  const held = new Map<string, number>();
  return {
    async hold(guest, micros, nowMs = Date.now()) {
      const keys = keysOf(guest);
      const spent = await store.spent(keys, nowMs);
      if (keys.some((k, i) => (spent[i] ?? 0) + (held.get(k) ?? 0) + micros > cap)) {
        throw new GuestSpendCapReachedError(cap, hint);
      }
      for (const k of keys) held.set(k, (held.get(k) ?? 0) + micros);
    },
    release(guest, micros) {
      for (const k of keysOf(guest)) {
        const left = (held.get(k) ?? 0) - micros;
        if (left > 0) held.set(k, left);
        else held.delete(k);
      }
    },
    async check(guest, nowMs = Date.now()) {
      const spent = await store.spent(keysOf(guest), nowMs);
      if (spent.some((micros) => micros >= cap)) throw new GuestSpendCapReachedError(cap, hint);
    },
    async record(guest, micros, nowMs = Date.now()) {
      if (micros > 0) await store.add(keysOf(guest), micros, nowMs);
    },
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
