/**
 * What an API key may do beyond being active: an expiry, the models it may call, and a budget in dollars that
 * resets daily, monthly or never. Auth asks `refuseIfExpired` for every keyed call; the gateway asks `checkModel`
 * before it resolves a model; the gateway's biller takes a budget hold (`holdBudget`) beside the wallet hold, so a
 * call the key's remaining budget cannot cover is refused (402 `key_budget_exceeded`) before any upstream call.
 *
 * Budget holds are rows (key_budget_holds), taken under `exclusive` — a row lock on PostgreSQL — so replicas on one
 * database never hand out the same budget twice; a hold nobody settles lapses at its `expires_at`. A key without a
 * policy row has no limits. The policy a call checks is read through `policyReads` (src/signals/read-cache.ts: on
 * PostgreSQL kept in the process and dropped in every replica by `set`), so a call pays no lookup of its own.
 */
import { randomUUID } from 'node:crypto';
import { InvalidApiKeyError, PermissionDeniedError } from '../../domain/errors';
import { AppError } from '../../domain/errors';
import { passThroughReads, type ReadCache } from '../../signals/read-cache';
import { num, str, type AdminSql, type SqlRow } from '../../stores/types/admin-sql';
import { createBudgetLedger, periodStartOf, type BudgetPeriod } from './budget-ledger';

export { BUDGET_PERIODS, periodStartOf, type BudgetPeriod } from './budget-ledger';

export interface KeyPolicy {
  keyId: string;
  expiresAt: Date | null;
  /** null: every model. */
  allowedModels: string[] | null;
  /** null: no budget. */
  budgetMicros: number | null;
  budgetPeriod: BudgetPeriod;
  /** Start of the period `spentMicros` counts. */
  periodStart: Date;
  spentMicros: number;
}

export type KeyPolicyInput = Partial<Pick<KeyPolicy, 'expiresAt' | 'allowedModels' | 'budgetMicros' | 'budgetPeriod'>>;

/** 402: the key's own budget (set by an operator) cannot cover the most the call can cost. */
export class KeyBudgetExceededError extends AppError {
  constructor() {
    super(402, {
      message: "This API key's budget cannot cover this call; ask the operator to raise it or wait for its reset",
      type: 'billing_error',
      code: 'key_budget_exceeded',
    });
  }
}

const toPolicy = (row: SqlRow): KeyPolicy => ({
  keyId: String(row.key_id),
  expiresAt: row.expires_at ? new Date(str(row.expires_at)) : null,
  allowedModels: row.allowed_models ? (JSON.parse(str(row.allowed_models)) as string[]) : null,
  budgetMicros: num(row.budget_micros),
  budgetPeriod: row.budget_period as BudgetPeriod,
  periodStart: new Date(String(row.period_start)),
  spentMicros: num(row.spent_micros) ?? 0,
});

export interface KeyPolicies {
  get(keyId: string): Promise<KeyPolicy | null>;
  /** Sets the given fields (others kept); a new budget period starts counting from now. */
  set(keyId: string, input: KeyPolicyInput): Promise<KeyPolicy>;
  /** @throws InvalidApiKeyError (401, like a revoked key) when the key has expired. */
  refuseIfExpired(keyId: string): Promise<void>;
  /** @throws PermissionDeniedError 403 `model_not_allowed` when the key has an allow-list without `model`. */
  checkModel(keyId: string, model: string): Promise<void>;
  /**
   * Holds `micros` of the key's budget, or answers null when the key has no budget.
   * @throws KeyBudgetExceededError when the budget less spend and live holds cannot cover it.
   */
  holdBudget(keyId: string, micros: number, ttlMs: number): Promise<string | null>;
  /**
   * Holds as much of `range` as the key's budget has room for (a decision stream's slice), or null without a budget.
   * @throws KeyBudgetExceededError when not even `range.minMicros` fits.
   */
  holdBudgetUpTo(
    keyId: string,
    range: { minMicros: number; maxMicros: number },
    ttlMs: number,
  ): Promise<{ holdId: string; micros: number } | null>;
  /** Counts `costMicros` as spent and gives the hold back. */
  settleBudget(holdId: string, keyId: string, costMicros: number): Promise<void>;
  releaseBudget(holdId: string): Promise<void>;
  /**
   * Records a settled call for spend reports. Written behind (queued, then many rows per statement at most
   * `spendFlushMs` later), so the gateway's hot path does not wait for a write of its own.
   */
  recordSpend(entry: { keyId: string | null; orgId: string; model: string; micros: number }): Promise<void>;
  /** Writes the queued spend records: before a report reads them, and when the process closes. */
  flushSpend(): Promise<void>;
  /** Micro-dollars held against the key's budget by live holds. */
  held(keyId: string): Promise<number>;
}

/** How long a spend record may wait in memory before it is written (a replica's report sees others' this late). */
const SPEND_FLUSH_MS = 100;
/** Rows per INSERT statement when the queue is written. */
const SPEND_ROWS_PER_STATEMENT = 100;

interface SpendRecord {
  id: string;
  keyId: string | null;
  orgId: string;
  model: string;
  micros: number;
  at: string;
}

export function createKeyPolicies(
  sql: AdminSql,
  now: () => Date = () => new Date(),
  spendFlushMs = SPEND_FLUSH_MS,
  policyReads: ReadCache<KeyPolicy | null> = passThroughReads(),
): KeyPolicies {
  const keyLedger = createBudgetLedger(
    sql,
    { budgets: 'api_key_policies', holds: 'key_budget_holds', id: 'key_id' },
    () => new KeyBudgetExceededError(),
    now,
  );
  let queued: SpendRecord[] = [];
  let flushTimer: NodeJS.Timeout | null = null;
  const flushSpend = async (): Promise<void> => {
    if (flushTimer) clearTimeout(flushTimer);
    flushTimer = null;
    const rows = queued;
    queued = [];
    for (let i = 0; i < rows.length; i += SPEND_ROWS_PER_STATEMENT) {
      const chunk = rows.slice(i, i + SPEND_ROWS_PER_STATEMENT);
      try {
        await sql.run(
          `INSERT INTO key_spend (id, key_id, org_id, model, micros, created_at) VALUES ${chunk
            .map(() => '(?, ?, ?, ?, ?, ?)')
            .join(', ')}`,
          chunk.flatMap((r) => [r.id, r.keyId, r.orgId, r.model, r.micros, r.at]),
        );
      } catch (error) {
        // Kept for the next flush (the database may be back by then) rather than lost.
        queued = [...rows.slice(i), ...queued];
        throw error;
      }
    }
  };

  const select = async (q: Pick<AdminSql, 'all'>, keyId: string): Promise<KeyPolicy | null> => {
    const [row] = await q.all('SELECT * FROM api_key_policies WHERE key_id = ?', [keyId]);
    return row ? toPolicy(row) : null;
  };
  /** The policy a call is checked against (its limits; `spentMicros` may be stale, the ledger reads its own). */
  const policyOf = (keyId: string): Promise<KeyPolicy | null> => policyReads.read(keyId, () => select(sql, keyId));

  return {
    get: (keyId) => select(sql, keyId),

    async set(keyId, input) {
      const current = await select(sql, keyId);
      const period = input.budgetPeriod ?? current?.budgetPeriod ?? 'none';
      const next: KeyPolicy = {
        keyId,
        expiresAt: input.expiresAt !== undefined ? input.expiresAt : (current?.expiresAt ?? null),
        allowedModels: input.allowedModels !== undefined ? input.allowedModels : (current?.allowedModels ?? null),
        budgetMicros: input.budgetMicros !== undefined ? input.budgetMicros : (current?.budgetMicros ?? null),
        budgetPeriod: period,
        periodStart: current && current.budgetPeriod === period ? current.periodStart : periodStartOf(period, now()),
        spentMicros: current && current.budgetPeriod === period ? current.spentMicros : 0,
      };
      const params = [
        next.expiresAt?.toISOString() ?? null,
        next.allowedModels ? JSON.stringify(next.allowedModels) : null,
        next.budgetMicros,
        next.budgetPeriod,
        next.periodStart.toISOString(),
        next.spentMicros,
      ];
      if (current) {
        await sql.run(
          `UPDATE api_key_policies SET expires_at = ?, allowed_models = ?, budget_micros = ?, budget_period = ?,
             period_start = ?, spent_micros = ? WHERE key_id = ?`,
          [...params, keyId],
        );
      } else {
        await sql.run(
          `INSERT INTO api_key_policies (expires_at, allowed_models, budget_micros, budget_period, period_start,
             spent_micros, key_id) VALUES (?, ?, ?, ?, ?, ?, ?)`,
          [...params, keyId],
        );
      }
      await policyReads.invalidate();
      return next;
    },

    async refuseIfExpired(keyId) {
      const expiresAt = (await policyOf(keyId))?.expiresAt;
      if (expiresAt && expiresAt.getTime() <= now().getTime()) {
        throw new InvalidApiKeyError();
      }
    },

    async checkModel(keyId, model) {
      const allowed = (await policyOf(keyId))?.allowedModels;
      if (!allowed) return;
      if (!allowed.includes(model)) {
        throw new PermissionDeniedError(
          `This API key may not call model '${model}'; it may call: ${allowed.join(', ') || 'none'}`,
          'model_not_allowed',
        );
      }
    },

    async holdBudget(keyId, micros, ttlMs) {
      const policy = await policyOf(keyId);
      if (!policy || policy.budgetMicros === null) return null;
      return keyLedger.hold(keyId, policy.budgetMicros, policy.budgetPeriod, micros, ttlMs);
    },

    async holdBudgetUpTo(keyId, range, ttlMs) {
      const policy = await select(sql, keyId);
      if (!policy || policy.budgetMicros === null) return null;
      return keyLedger.holdUpTo(keyId, policy.budgetMicros, policy.budgetPeriod, range, ttlMs);
    },

    settleBudget: (holdId, keyId, costMicros) => keyLedger.settle(holdId, keyId, costMicros),
    releaseBudget: (holdId) => keyLedger.release(holdId),

    async recordSpend({ keyId, orgId, model, micros }) {
      queued.push({ id: randomUUID(), keyId, orgId, model, micros, at: now().toISOString() });
      if (flushTimer) return;
      flushTimer = setTimeout(() => {
        flushTimer = null;
        flushSpend().catch(() => undefined);
      }, spendFlushMs);
      flushTimer.unref();
    },

    flushSpend,

    held: (keyId) => keyLedger.held(keyId),
  };
}
