/**
 * What billing may ask of persistence about an organisation's balance: credits and debits with their ledger entry.
 */

export interface WalletStore {
  /** Adds (or with a negative amount, removes) micro-dollars and records the entry; returns the new balance. */
  credit(orgId: string, amountMicros: number, reason: string): Promise<number>;
  balance(orgId: string): Promise<number>;
}
