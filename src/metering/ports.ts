/**
 * The ports of metering: where its state lives. Each has a one-replica implementation in src/backend/local/metering-stores.ts; a shared
 * implementation (Redis, PostgreSQL) fills the same interface so that several replicas meter as one. What each
 * port must keep atomic is said on it.
 *
 * - RateLimitStore: the per-caller request counts of the fixed windows (rate-limiter.ts).
 * - GuestSpendStore: what guests spent today, per client address and per browser fingerprint (guest-spend.ts).
 * - HoldStore: money held by calls still running, per guest counter (guest-spend.ts), so a reservation sees what
 *   other calls may still spend. (An organisation's holds live in its WalletStore, src/stores/types/wallet.ts,
 *   which takes each one atomically in the database.)
 * - PayerLock: guests' reservations and settlements run one at a time (billing.ts's guests' lane), so a read of
 *   the held amounts followed by an add is not raced; a hold store shared across replicas needs a lock shared as
 *   widely. Organisations need no lock: the wallet store takes each hold in one atomic step.
 *
 * The organisation's balance itself is the WalletStore of src/stores (the database's ledger). The request queue
 * (request-queue.ts) is per replica by design (the spec's queue is "per ingress replica") and has no port.
 */
import type { KeyedMutex } from '../lib/keyed-mutex';

export type WindowName = 'minute' | 'hour';

export interface RateWindow {
  name: WindowName;
  lengthS: number;
  limit: number;
}

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

/** Per-key micro-dollar counters for one UTC day. */
export interface GuestSpendStore {
  /** Micro-dollars spent today under each key (0 for unknown keys), in order. */
  spent(keys: readonly string[], nowMs: number): Promise<number[]>;
  /** Add `micros` to each key's count for today. */
  add(keys: readonly string[], micros: number, nowMs: number): Promise<void>;
}

/**
 * Micro-dollars held per key by calls not yet settled. Reads and adds run under the payer's lock (PayerLock), so a
 * read followed by an add is not raced by another reservation of the same payer; removals come from anywhere (a
 * settled, failed or lapsed hold). A shared store should let holds expire on their own after the biller's hold
 * lifetime, so a replica that dies holding money does not keep it held.
 */
export interface HoldStore {
  /** Micro-dollars held under each key (0 for none), in order. */
  held(keys: readonly string[]): Promise<number[]>;
  /** Adds `micros` to each key's hold. */
  add(keys: readonly string[], micros: number): Promise<void>;
  /** Takes `micros` off each key's hold. Never throws: a shared store reports its own failures and may finish later. */
  remove(keys: readonly string[], micros: number): void;
}

/** Runs work for one key (a payer) one at a time; the in-memory one is lib/keyed-mutex.ts. */
export type PayerLock = KeyedMutex;
