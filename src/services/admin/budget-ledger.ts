/**
 * A budget in dollars with a reset period, held like a wallet: the same steps for a key's budget and an
 * organisation's, over a table of budgets (`spent_micros`, `budget_period`, `period_start`) and a table of holds.
 *
 * A hold is taken under `exclusive` (a row lock on PostgreSQL, so replicas never hand out the same budget twice): a
 * new day or month first starts the count again, lapsed holds are dropped, and the hold is taken only if what was
 * spent this period plus what live holds keep plus the new hold stays within the limit. Settling counts the real
 * cost and drops the hold; a hold nobody settles lapses at its `expires_at`. `holdUpTo` takes as much of a range as
 * fits in one step: a decision stream's slice of many frames (budget-slices.ts) without a refusal near the limit.
 */
import { randomUUID } from 'node:crypto';
import type { AppError } from '../../domain/errors';
import { num, type AdminSql } from '../../stores/types/admin-sql';

export const BUDGET_PERIODS = ['daily', 'monthly', 'none'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

/** The start of the period containing `at` (UTC): midnight, the 1st of the month, or the epoch for `none`. */
export function periodStartOf(period: BudgetPeriod, at: Date): Date {
  if (period === 'daily') return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
  if (period === 'monthly') return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  return new Date(0);
}

/** Where one kind of budget lives: its table, the holds table, and the column both key on. */
export interface BudgetTables {
  budgets: 'api_key_policies' | 'org_budgets';
  holds: 'key_budget_holds' | 'org_budget_holds';
  id: 'key_id' | 'org_id';
}

export interface BudgetLedger {
  /** @throws the ledger's error when the hold does not fit. @returns the hold's id. */
  hold(id: string, limitMicros: number, period: BudgetPeriod, micros: number, ttlMs: number): Promise<string>;
  /**
   * Holds as much of `maxMicros` as fits, at least `minMicros`.
   * @throws the ledger's error when not even `minMicros` fits.
   */
  holdUpTo(
    id: string,
    limitMicros: number,
    period: BudgetPeriod,
    range: { minMicros: number; maxMicros: number },
    ttlMs: number,
  ): Promise<{ holdId: string; micros: number }>;
  settle(holdId: string, id: string, costMicros: number): Promise<void>;
  release(holdId: string): Promise<void>;
  held(id: string): Promise<number>;
}

export function createBudgetLedger(
  sql: AdminSql,
  t: BudgetTables,
  exceeded: () => AppError,
  now: () => Date,
): BudgetLedger {
  const lockSql = `SELECT ${t.id} FROM ${t.budgets} WHERE ${t.id} = ? FOR UPDATE`;
  const exclusive = <T>(id: string, work: Parameters<AdminSql['exclusive']>[2]): Promise<T> =>
    sql.exclusive(id, lockSql, work) as Promise<T>;
  const holdRange: BudgetLedger['holdUpTo'] = (id, limitMicros, period, range, ttlMs) =>
    exclusive(id, async (q) => {
      const at = now();
      const start = periodStartOf(period, at).toISOString();
      // A new day or month: the spend counted so far belongs to the last period.
      await q.run(`UPDATE ${t.budgets} SET spent_micros = 0, period_start = ? WHERE ${t.id} = ? AND period_start < ?`, [
        start,
        id,
        start,
      ]);
      await q.run(`DELETE FROM ${t.holds} WHERE ${t.id} = ? AND expires_at <= ?`, [id, at.toISOString()]);
      const [state] = await q.all(
        `SELECT b.spent_micros AS spent, (SELECT COALESCE(SUM(h.micros), 0) FROM ${t.holds} h
           WHERE h.${t.id} = b.${t.id}) AS held FROM ${t.budgets} b WHERE b.${t.id} = ?`,
        [id],
      );
      const room = limitMicros - ((num(state?.spent) ?? 0) + (num(state?.held) ?? 0));
      if (room < range.minMicros) throw exceeded();
      const micros = Math.min(range.maxMicros, room);
      const holdId = randomUUID();
      // A call that can cost nothing (a free planner's run) holds nothing; settling it still counts what it cost.
      if (micros <= 0) return { holdId, micros: 0 };
      await q.run(`INSERT INTO ${t.holds} (id, ${t.id}, micros, expires_at) VALUES (?, ?, ?, ?)`, [
        holdId,
        id,
        micros,
        new Date(at.getTime() + ttlMs).toISOString(),
      ]);
      return { holdId, micros };
    });
  return {
    async hold(id, limitMicros, period, micros, ttlMs) {
      const taken = await holdRange(id, limitMicros, period, { minMicros: micros, maxMicros: micros }, ttlMs);
      return taken.holdId;
    },

    holdUpTo: holdRange,

    async settle(holdId, id, costMicros) {
      await exclusive<void>(id, async (q) => {
        await q.run(`DELETE FROM ${t.holds} WHERE id = ?`, [holdId]);
        await q.run(`UPDATE ${t.budgets} SET spent_micros = spent_micros + ? WHERE ${t.id} = ?`, [costMicros, id]);
      });
    },

    async release(holdId) {
      await sql.run(`DELETE FROM ${t.holds} WHERE id = ?`, [holdId]);
    },

    async held(id) {
      const [row] = await sql.all(
        `SELECT COALESCE(SUM(micros), 0) AS held FROM ${t.holds} WHERE ${t.id} = ? AND expires_at > ?`,
        [id, now().toISOString()],
      );
      return num(row?.held) ?? 0;
    },
  };
}
