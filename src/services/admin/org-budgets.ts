/**
 * An organisation's own budget in dollars, with a reset period, beside its wallet: an operator caps what an
 * organisation may spend per day or month however much credit it holds. Held like a key's budget (budget-ledger.ts).
 * The budget a call holds against is read through `budgetReads` (src/signals/read-cache.ts: on PostgreSQL kept in
 * the process and dropped in every replica by `set`), so an organisation without one costs a call no lookup.
 */
import { AppError } from '../../domain/errors';
import { passThroughReads, type ReadCache } from '../../signals/read-cache';
import { num, str, type AdminSql } from '../../stores/types/admin-sql';
import { createBudgetLedger, periodStartOf, type BudgetPeriod } from './budget-ledger';

/** 402: the organisation's budget (set by an operator) cannot cover the most the call can cost. */
export class OrgBudgetExceededError extends AppError {
  constructor() {
    super(402, {
      message: "Your organisation's budget cannot cover this call; ask the operator to raise it or wait for its reset",
      type: 'billing_error',
      code: 'org_budget_exceeded',
    });
  }
}

export interface OrgBudget {
  orgId: string;
  budgetMicros: number;
  budgetPeriod: BudgetPeriod;
  periodStart: Date;
  spentMicros: number;
}

export interface OrgBudgets {
  get(orgId: string): Promise<OrgBudget | null>;
  /** Sets (or with null, removes) the budget; a new period starts counting from zero. */
  set(orgId: string, budgetMicros: number | null, period?: BudgetPeriod): Promise<OrgBudget | null>;
  /** @returns the hold's id, or null when the organisation has no budget. @throws OrgBudgetExceededError */
  hold(orgId: string, micros: number, ttlMs: number): Promise<string | null>;
  /** As much of `range` as fits (a decision stream's slice). @returns null without a budget. @throws OrgBudgetExceededError */
  holdUpTo(
    orgId: string,
    range: { minMicros: number; maxMicros: number },
    ttlMs: number,
  ): Promise<{ holdId: string; micros: number } | null>;
  settle(holdId: string, orgId: string, costMicros: number): Promise<void>;
  release(holdId: string): Promise<void>;
}

export function createOrgBudgets(
  sql: AdminSql,
  now: () => Date = () => new Date(),
  budgetReads: ReadCache<OrgBudget | null> = passThroughReads(),
): OrgBudgets {
  const ledger = createBudgetLedger(
    sql,
    { budgets: 'org_budgets', holds: 'org_budget_holds', id: 'org_id' },
    () => new OrgBudgetExceededError(),
    now,
  );
  const get = async (orgId: string): Promise<OrgBudget | null> => {
    const [row] = await sql.all('SELECT * FROM org_budgets WHERE org_id = ?', [orgId]);
    if (!row) return null;
    return {
      orgId,
      budgetMicros: num(row.budget_micros) ?? 0,
      budgetPeriod: row.budget_period as BudgetPeriod,
      periodStart: new Date(str(row.period_start)),
      spentMicros: num(row.spent_micros) ?? 0,
    };
  };
  return {
    get,
    async set(orgId, budgetMicros, period) {
      try {
        return await write(orgId, budgetMicros, period);
      } finally {
        await budgetReads.invalidate();
      }
    },
    async hold(orgId, micros, ttlMs) {
      const budget = await budgetReads.read(orgId, () => get(orgId));
      if (!budget) return null;
      return ledger.hold(orgId, budget.budgetMicros, budget.budgetPeriod, micros, ttlMs);
    },
    async holdUpTo(orgId, range, ttlMs) {
      const budget = await get(orgId);
      if (!budget) return null;
      return ledger.holdUpTo(orgId, budget.budgetMicros, budget.budgetPeriod, range, ttlMs);
    },
    settle: (holdId, orgId, costMicros) => ledger.settle(holdId, orgId, costMicros),
    release: (holdId) => ledger.release(holdId),
  };

  /** Sets (or with null, removes) the budget row. */
  async function write(orgId: string, budgetMicros: number | null, period?: BudgetPeriod): Promise<OrgBudget | null> {
    const current = await get(orgId);
    if (budgetMicros === null) {
      await sql.run('DELETE FROM org_budgets WHERE org_id = ?', [orgId]);
      return null;
    }
    const budgetPeriod = period ?? current?.budgetPeriod ?? 'none';
    if (current && current.budgetPeriod === budgetPeriod) {
      await sql.run('UPDATE org_budgets SET budget_micros = ? WHERE org_id = ?', [budgetMicros, orgId]);
    } else {
      await sql.run('DELETE FROM org_budgets WHERE org_id = ?', [orgId]);
      await sql.run(
        `INSERT INTO org_budgets (org_id, budget_micros, budget_period, period_start, spent_micros)
             VALUES (?, ?, ?, ?, 0)`,
        [orgId, budgetMicros, budgetPeriod, periodStartOf(budgetPeriod, now()).toISOString()],
      );
    }
    return get(orgId);
  }
}
