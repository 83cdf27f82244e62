/**
 * What billing may ask of persistence about an organisation's balance: credits and debits with their ledger entry,
 * and holds (money set aside for a call in flight) that the store keeps, so the check "balance less what other calls
 * hold covers this one" is one atomic step of the store on any number of processes.
 */

export interface WalletStore {
  /** Adds (or with a negative amount, removes) micro-dollars and records the entry; returns the new balance. */
  credit(orgId: string, amountMicros: number, reason: string): Promise<number>;
  /** The balance (holds not subtracted). */
  balance(orgId: string): Promise<number>;
  /**
   * Holds `micros` if the balance less every other live hold covers it, atomically (no two callers can both take
   * the same money). The hold lapses by itself after `ttlMs` if nobody settles or releases it (a crashed process).
   * @returns the hold's id, or null when it does not fit.
   */
  hold(orgId: string, micros: number, ttlMs: number): Promise<string | null>;
  /**
   * Debits `costMicros` (recorded with `reason`) and gives the hold back, in one step: no other hold can see the money
   * twice. A hold already gone (lapsed, released) is only debited. @returns the new balance.
   */
  settle(holdId: string, orgId: string, costMicros: number, reason: string): Promise<number>;
  /** Gives a hold back without a debit; idempotent. */
  release(holdId: string): Promise<void>;
  /** Micro-dollars held by live holds of an organisation (for tests and operators). */
  held(orgId: string): Promise<number>;
}
