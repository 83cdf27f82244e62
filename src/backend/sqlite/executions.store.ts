/**
 * SQLite ExecutionStore: execution records and their callback deliveries. Status changes are compare-and-set
 * (`WHERE status IN (...)`), like predictions, so a runner and the restart sweep never both move one record.
 */

import type { ExecutionStore } from '../../stores/types/execution';
import type { SqliteDatabase } from './database';
import { transitionRow } from './status-update';
import { type ExecutionRow, toExecution } from '../../stores/rows/executions.rows';
import {
  deliveryValues,
  EXECUTION_DELIVERIES,
  insertDeliverySql,
  selectDeliveriesSql,
  SQLITE_PLACEHOLDER,
  toDeliveryFields,
  type DeliveryRow,
} from '../../stores/rows/deliveries.rows';

export function createSqliteExecutionStore(db: SqliteDatabase): ExecutionStore {
  const insertRow = db.prepare(
    `INSERT INTO executions (id, org_id, agent_id, name, model, status, execution_mode, request_json, response_json,
                             usage_json, steps_json, error_message, callback_url, session_id, attempts, created_at,
                             updated_at, completed_at)
     VALUES (@id, @org_id, @agent_id, @name, @model, @status, @execution_mode, @request_json, @response_json,
             @usage_json, @steps_json, @error_message, @callback_url, @session_id, @attempts, @created_at,
             @created_at, @completed_at)`,
  );
  const byOrgAndId = db.prepare<[string, string], ExecutionRow>('SELECT * FROM executions WHERE org_id = ? AND id = ?');
  const byId = db.prepare<[string], ExecutionRow>('SELECT * FROM executions WHERE id = ?');
  const page = db.prepare<[string, number, number], ExecutionRow>(
    'SELECT * FROM executions WHERE org_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?',
  );
  const unfinished = db.prepare<[], ExecutionRow>(
    `SELECT * FROM executions WHERE status IN ('pending', 'enqueued', 'running') ORDER BY created_at, rowid`,
  );
  const paused = db.prepare<[], ExecutionRow>(
    `SELECT * FROM executions WHERE status = 'paused' ORDER BY created_at, rowid`,
  );
  const stalled = db.prepare<[string], ExecutionRow>(
    "SELECT * FROM executions WHERE status = 'running' AND updated_at < ? ORDER BY updated_at, rowid",
  );
  const progress = db.prepare(
    "UPDATE executions SET steps_json = @steps, usage_json = COALESCE(@usage, usage_json), updated_at = @now WHERE id = @id AND status = 'running'" +
      ' AND (@claim IS NULL OR attempts = @claim)',
  );
  const insertDelivery = db.prepare(insertDeliverySql(EXECUTION_DELIVERIES, SQLITE_PLACEHOLDER));
  const deliveries = db.prepare<[string], DeliveryRow>(selectDeliveriesSql(EXECUTION_DELIVERIES, SQLITE_PLACEHOLDER));

  return {
    async insert(e) {
      insertRow.run({
        id: e.id,
        org_id: e.orgId,
        agent_id: e.agentId,
        name: e.name,
        model: e.model,
        status: e.status,
        execution_mode: e.executionMode,
        request_json: JSON.stringify(e.request),
        response_json: e.response === null ? null : JSON.stringify(e.response),
        usage_json: JSON.stringify(e.usage),
        steps_json: JSON.stringify(e.steps),
        error_message: e.errorMessage,
        callback_url: e.callbackUrl,
        session_id: e.sessionId,
        attempts: e.attempts,
        created_at: e.createdAt.toISOString(),
        completed_at: e.completedAt?.toISOString() ?? null,
      });
      return e;
    },
    async get(orgId, id) {
      const row = byOrgAndId.get(orgId, id);
      return row ? toExecution(row) : null;
    },
    async getById(id) {
      const row = byId.get(id);
      return row ? toExecution(row) : null;
    },
    async list(orgId, { skip, limit }) {
      return page.all(orgId, limit, skip).map(toExecution);
    },
    async transition(id, from, to, update = {}, claim) {
      const row = transitionRow<ExecutionRow>(
        db,
        'executions',
        { id, from, to, claim },
        {
          response_json: 'response' in update ? (update.response ? JSON.stringify(update.response) : null) : undefined,
          usage_json: update.usage ? JSON.stringify(update.usage) : undefined,
          steps_json: update.steps ? JSON.stringify(update.steps) : undefined,
          execution_mode: update.executionMode || undefined,
          error_message: 'errorMessage' in update ? (update.errorMessage ?? null) : undefined,
          completed_at: 'completedAt' in update ? (update.completedAt?.toISOString() ?? null) : undefined,
          attempts: update.attempts,
          pause_json: 'pause' in update ? (update.pause ? JSON.stringify(update.pause) : null) : undefined,
        },
      );
      return row ? toExecution(row) : null;
    },
    async saveProgress(id, update, claim) {
      progress.run({
        id,
        steps: JSON.stringify(update.steps ?? []),
        usage: update.usage ? JSON.stringify(update.usage) : null,
        now: new Date().toISOString(),
        claim: claim ?? null,
      });
    },
    async unfinished() {
      return unfinished.all().map(toExecution);
    },
    async paused() {
      return paused.all().map(toExecution);
    },
    async touch(ids) {
      if (ids.length === 0) return;
      db.prepare(
        `UPDATE executions SET updated_at = ? WHERE status = 'running' AND id IN (${ids.map(() => '?').join(', ')})`,
      ).run(new Date().toISOString(), ...ids);
    },
    async stalled(before) {
      return stalled.all(before.toISOString()).map(toExecution);
    },
    async recordDelivery(d) {
      insertDelivery.run(...deliveryValues(d.executionId, d));
    },
    async deliveries(executionId) {
      return deliveries.all(executionId).map((r) => ({ executionId: r.subject_id, ...toDeliveryFields(r) }));
    },
  };
}
