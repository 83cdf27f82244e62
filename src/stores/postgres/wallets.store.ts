/**
 * PostgreSQL WalletStore: balances in integer micro-dollars with a ledger entry per change, and holds as rows.
 *
 * Every change is written through (several replicas share the balance, so none may keep it in memory). A hold is
 * one statement: the conditional UPDATE of `held_micros` (`WHERE balance_micros - held_micros >= $x`) and the
 * insert of the hold row, in one CTE. Under READ COMMITTED a concurrent writer waits for the row lock and re-checks
 * the condition on the new row version, so no number of concurrent calls on any number of replicas can hold more
 * than the balance. Settling debits and gives the hold back in one transaction; a hold whose process died lapses at
 * `expires_at` and is given back by the next hold that would not otherwise fit.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { WalletStore } from '../types';
import { withTransaction, type Queryable } from './database';

async function applyCredit(db: Queryable, orgId: string, amountMicros: number, reason: string): Promise<number> {
  const at = new Date().toISOString();
  const { rows } = await db.query<{ balance_micros: number }>(
    `WITH w AS (
       INSERT INTO wallets (org_id, balance_micros, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (org_id) DO UPDATE SET balance_micros = wallets.balance_micros + $2, updated_at = $3
       RETURNING balance_micros)
     INSERT INTO wallet_entries (org_id, amount_micros, balance_after_micros, reason, created_at)
     SELECT $1, $2, balance_micros, $4, $3 FROM w RETURNING balance_after_micros AS balance_micros`,
    [orgId, amountMicros, at, reason],
  );
  return rows[0]?.balance_micros ?? 0;
}

/** Gives back a hold (when it still exists): the row goes, `held_micros` drops by its amount. */
const RELEASE = `WITH h AS (DELETE FROM wallet_holds WHERE id = $1 RETURNING org_id, micros)
  UPDATE wallets w SET held_micros = w.held_micros - h.micros FROM h WHERE w.org_id = h.org_id`;

/** Gives back every lapsed hold of an organisation. */
const RELEASE_LAPSED = `WITH h AS (DELETE FROM wallet_holds WHERE org_id = $1 AND expires_at < now() RETURNING micros)
  UPDATE wallets SET held_micros = held_micros - (SELECT COALESCE(SUM(micros), 0) FROM h)
   WHERE org_id = $1 AND EXISTS (SELECT 1 FROM h)`;

const HOLD = `WITH w AS (
    UPDATE wallets SET held_micros = held_micros + $2
     WHERE org_id = $1 AND balance_micros - held_micros >= $2 RETURNING org_id)
  INSERT INTO wallet_holds (id, org_id, micros, expires_at)
  SELECT $3, org_id, $2, now() + make_interval(secs => $4) FROM w RETURNING id`;

export function createPostgresWalletStore(pool: pg.Pool): WalletStore {
  const tryHold = async (orgId: string, micros: number, ttlMs: number): Promise<string | null> => {
    const { rows } = await pool.query<{ id: string }>(HOLD, [orgId, micros, randomUUID(), ttlMs / 1000]);
    return rows[0]?.id ?? null;
  };

  return {
    async credit(orgId, amountMicros, reason) {
      if (!Number.isSafeInteger(amountMicros)) throw new RangeError('amount must be a whole number of micro-dollars');
      return applyCredit(pool, orgId, amountMicros, reason);
    },
    async balance(orgId) {
      const { rows } = await pool.query<{ b: number }>('SELECT balance_micros AS b FROM wallets WHERE org_id = $1', [
        orgId,
      ]);
      return rows[0]?.b ?? 0;
    },
    async hold(orgId, micros, ttlMs) {
      if (!Number.isSafeInteger(micros) || micros <= 0) throw new RangeError('a hold is a positive whole amount');
      const id = await tryHold(orgId, micros, ttlMs);
      if (id !== null) return id;
      // Holds of a process that died lapse: give them back, then try once more.
      const lapsed = await pool.query(RELEASE_LAPSED, [orgId]);
      return (lapsed.rowCount ?? 0) > 0 ? tryHold(orgId, micros, ttlMs) : null;
    },
    async settle(holdId, orgId, costMicros, reason) {
      if (!Number.isSafeInteger(costMicros)) throw new RangeError('amount must be a whole number of micro-dollars');
      return withTransaction(pool, async (client) => {
        // The debit lands before the hold is given back (same transaction): no hold sees the money twice.
        const balance = await applyCredit(client, orgId, -costMicros, reason);
        await client.query(RELEASE, [holdId]);
        return balance;
      });
    },
    async release(holdId) {
      await pool.query(RELEASE, [holdId]);
    },
    async held(orgId) {
      const { rows } = await pool.query<{ h: number }>('SELECT held_micros AS h FROM wallets WHERE org_id = $1', [
        orgId,
      ]);
      return rows[0]?.h ?? 0;
    },
  };
}
