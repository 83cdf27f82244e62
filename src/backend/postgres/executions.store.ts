/**
 * PostgreSQL ExecutionStore: execution records and their callback deliveries. Status changes are compare-and-set;
 * progress is written only while the execution is running, so a late progress write (they are fired without
 * waiting) can never overwrite a finished record.
 */
import type pg from 'pg';
import { toExecution, type ExecutionRow } from '../../stores/rows/executions.rows';
import {
  deliveryValues,
  EXECUTION_DELIVERIES,
  insertDeliverySql,
  POSTGRES_PLACEHOLDER,
  selectDeliveriesSql,
  toDeliveryFields,
  type DeliveryRow,
} from '../../stores/rows/deliveries.rows';
import type { ExecutionStore } from '../../stores/types/execution';
import { jsonOrNull, progressRow, transitionRow } from './status-update';

export function createPostgresExecutionStore(pool: pg.Pool): ExecutionStore {
  const rows = async (sql: string, params: unknown[]): Promise<ExecutionRow[]> =>
    (await pool.query<ExecutionRow>(sql, params)).rows;

  return {
    async insert(e) {
      await pool.query(
        `INSERT INTO executions (id, org_id, agent_id, name, model, status, execution_mode, request_json,
                                 response_json, usage_json, steps_json, error_message, callback_url, session_id,
                                 attempts, created_at, updated_at, completed_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $16, $17)`,
        [
          e.id,
          e.orgId,
          e.agentId,
          e.name,
          e.model,
          e.status,
          e.executionMode,
          JSON.stringify(e.request),
          jsonOrNull(e.response),
          JSON.stringify(e.usage),
          JSON.stringify(e.steps),
          e.errorMessage,
          e.callbackUrl,
          e.sessionId,
          e.attempts,
          e.createdAt.toISOString(),
          e.completedAt?.toISOString() ?? null,
        ],
      );
      return e;
    },
    async get(orgId, id) {
      const [row] = await rows('SELECT * FROM executions WHERE org_id = $1 AND id = $2', [orgId, id]);
      return row ? toExecution(row) : null;
    },
    async getById(id) {
      const [row] = await rows('SELECT * FROM executions WHERE id = $1', [id]);
      return row ? toExecution(row) : null;
    },
    async list(orgId, { skip, limit }) {
      return (
        await rows('SELECT * FROM executions WHERE org_id = $1 ORDER BY created_at DESC, seq DESC LIMIT $2 OFFSET $3', [
          orgId,
          limit,
          skip,
        ])
      ).map(toExecution);
    },
    async transition(id, from, to, update = {}, claim) {
      const row = await transitionRow<ExecutionRow>(
        pool,
        'executions',
        { id, from, to, claim },
        {
          response_json: 'response' in update ? jsonOrNull(update.response) : undefined,
          usage_json: update.usage ? JSON.stringify(update.usage) : undefined,
          steps_json: update.steps ? JSON.stringify(update.steps) : undefined,
          execution_mode: update.executionMode,
          error_message: 'errorMessage' in update ? (update.errorMessage ?? null) : undefined,
          completed_at: 'completedAt' in update ? (update.completedAt?.toISOString() ?? null) : undefined,
          attempts: update.attempts,
          pause_json: 'pause' in update ? jsonOrNull(update.pause) : undefined,
        },
      );
      return row ? toExecution(row) : null;
    },
    async saveProgress(id, update, claim) {
      await progressRow(
        pool,
        'executions',
        id,
        {
          steps_json: JSON.stringify(update.steps ?? []),
          usage_json: update.usage ? JSON.stringify(update.usage) : undefined,
        },
        claim,
      );
    },
    async unfinished() {
      return (
        await rows(
          `SELECT * FROM executions WHERE status IN ('pending', 'enqueued', 'running') ORDER BY created_at, seq`,
          [],
        )
      ).map(toExecution);
    },
    async paused() {
      return (await rows(`SELECT * FROM executions WHERE status = 'paused' ORDER BY created_at, seq`, [])).map(
        toExecution,
      );
    },
    async touch(ids) {
      if (ids.length === 0) return;
      await pool.query(`UPDATE executions SET updated_at = $2 WHERE id = ANY($1::text[]) AND status = 'running'`, [
        [...ids],
        new Date().toISOString(),
      ]);
    },
    async stalled(before) {
      return (
        await rows(`SELECT * FROM executions WHERE status = 'running' AND updated_at < $1 ORDER BY updated_at, seq`, [
          before.toISOString(),
        ])
      ).map(toExecution);
    },
    async recordDelivery(d) {
      await pool.query(insertDeliverySql(EXECUTION_DELIVERIES, POSTGRES_PLACEHOLDER), deliveryValues(d.executionId, d));
    },
    async deliveries(executionId) {
      const { rows: found } = await pool.query<DeliveryRow>(
        selectDeliveriesSql(EXECUTION_DELIVERIES, POSTGRES_PLACEHOLDER),
        [executionId],
      );
      return found.map((r) => ({ executionId: r.subject_id, ...toDeliveryFields(r) }));
    },
  };
}
