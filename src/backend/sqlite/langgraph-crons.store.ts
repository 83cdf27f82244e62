/**
 * SQLite LangGraph crons (migration 022), part of the LangGraphStore: a firing is claimed by an UPDATE conditional
 * on the `next_run_at` the claimer read, so of several replicas on one database exactly one changes the row.
 */
import type { LangGraphCronStore } from '../../stores/types';
import type { SqliteDatabase } from './database';
import { type LangGraphCronRow, toCronRecord } from '../../stores/rows/langgraph-crons.rows';

export function createSqliteCronStore(db: SqliteDatabase): LangGraphCronStore {
  const upsert = db.prepare(
    `INSERT INTO langgraph_crons (cron_id, org_id, thread_id, body_json, next_run_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (cron_id) DO UPDATE SET thread_id = excluded.thread_id, body_json = excluded.body_json,
       next_run_at = excluded.next_run_at, updated_at = excluded.updated_at`,
  );
  const one = db.prepare<[string, string], LangGraphCronRow>(
    `SELECT * FROM langgraph_crons WHERE org_id = ? AND cron_id = ?`,
  );
  const remove = db.prepare(`DELETE FROM langgraph_crons WHERE org_id = ? AND cron_id = ?`);
  const all = db.prepare<[string], LangGraphCronRow>(
    `SELECT * FROM langgraph_crons WHERE org_id = ? ORDER BY created_at, rowid`,
  );
  const due = db.prepare<[string, number], LangGraphCronRow>(
    `SELECT * FROM langgraph_crons WHERE next_run_at IS NOT NULL AND next_run_at <= ? ORDER BY next_run_at LIMIT ?`,
  );
  const claim = db.prepare(
    `UPDATE langgraph_crons SET next_run_at = ?, updated_at = ? WHERE cron_id = ? AND next_run_at = ?`,
  );
  return {
    async putCron(c) {
      upsert.run(
        c.cronId,
        c.orgId,
        c.threadId,
        JSON.stringify(c.body),
        c.nextRunAt?.toISOString() ?? null,
        c.createdAt.toISOString(),
        c.updatedAt.toISOString(),
      );
    },
    async getCron(orgId, cronId) {
      const row = one.get(orgId, cronId);
      return row ? toCronRecord(row) : null;
    },
    async deleteCron(orgId, cronId) {
      return remove.run(orgId, cronId).changes > 0;
    },
    async listCrons(orgId) {
      return all.all(orgId).map(toCronRecord);
    },
    async dueCrons(now, limit) {
      return due.all(now.toISOString(), limit).map(toCronRecord);
    },
    async claimCron(cronId, at, next, now) {
      return claim.run(next?.toISOString() ?? null, now.toISOString(), cronId, at.toISOString()).changes === 1;
    },
  };
}
