/**
 * The guest playground's daily spend cap: $0.50 per day per client IP and, separately, per browser fingerprint.
 *
 * Either counter can block. Days are UTC calendar days; a counter from an earlier day counts as zero, and the
 * memory store (src/backend/local/metering-stores.ts) drops all of yesterday's counters at the first call of a new day, so it holds at
 * most one day of guests. A shared store (Redis `INCRBY` on `guest:<day>:<key>` with a two-day `EXPIRE`) fits the
 * same port (`GuestSpendStore`, ports.ts); so do the amounts held by calls still running (`HoldStore`).
 */
import { GuestSpendCapReachedError } from './metering-errors';
import type { GuestSpendStore, HoldStore } from './ports';

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
  options: { capMicros?: number; upgradeHint?: string; holds: HoldStore },
): GuestSpendGuard {
  const cap = options.capMicros ?? GUEST_DAILY_CAP_MICROS;
  const hint = options.upgradeHint ?? 'Sign up for an API key to keep going.';
  const keysOf = (g: GuestIdentity): string[] =>
    g.fingerprint ? [`ip:${g.clientIp}`, `fp:${g.fingerprint}`] : [`ip:${g.clientIp}`];
  /** Micro-dollars held per counter key by calls still running. */
  const holds = options.holds;
  return {
    async hold(guest, micros, nowMs = Date.now()) {
      const keys = keysOf(guest);
      const spent = await store.spent(keys, nowMs);
      const held = await holds.held(keys);
      if (keys.some((_, i) => (spent[i] ?? 0) + (held[i] ?? 0) + micros > cap)) {
        throw new GuestSpendCapReachedError(cap, hint);
      }
      await holds.add(keys, micros);
    },
    release(guest, micros) {
      holds.remove(keysOf(guest), micros);
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
