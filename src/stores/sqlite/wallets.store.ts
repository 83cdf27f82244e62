/**
 * SQLite WalletStore: an organisation's USD balance in integer micro-dollars, with a ledger of every change.
 * Balance and ledger entry are written in one transaction so they never disagree.
 */
import type { WalletStore } from '../types';
import type { SqliteDatabase } from './database';

export function createSqliteWalletStore(db: SqliteDatabase): WalletStore {
  const upsert = db.prepare<[{ org: string; amount: number; now: string }], { balance_micros: number }>(
    `INSERT INTO wallets (org_id, balance_micros, updated_at) VALUES (@org, @amount, @now)
     ON CONFLICT (org_id) DO UPDATE SET balance_micros = balance_micros + @amount, updated_at = @now
     RETURNING balance_micros`,
  );
  const entry = db.prepare(
    'INSERT INTO wallet_entries (org_id, amount_micros, balance_after_micros, reason, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const read = db.prepare<[string], { balance_micros: number }>('SELECT balance_micros FROM wallets WHERE org_id = ?');

  const creditTx = db.transaction((orgId: string, amountMicros: number, reason: string): number => {
    const now = new Date().toISOString();
    const row = upsert.get({ org: orgId, amount: amountMicros, now });
    const balance = row?.balance_micros ?? 0;
    entry.run(orgId, amountMicros, balance, reason, now);
    return balance;
  });

  return {
    async credit(orgId, amountMicros, reason) {
      if (!Number.isSafeInteger(amountMicros)) throw new RangeError('amount must be a whole number of micro-dollars');
      return creditTx(orgId, amountMicros, reason);
    },
    async balance(orgId) {
      return read.get(orgId)?.balance_micros ?? 0;
    },
  };
}
