/**
 * PostgreSQL LangGraph crons (mirrors the SQLite room's langgraph-crons.store.ts): a firing is claimed by an UPDATE
 * conditional on the `next_run_at` the claimer read; under READ COMMITTED a second replica's UPDATE waits for the
 * first, re-reads the row, no longer matches and changes nothing.
 */
import type pg from 'pg';
import { toCronRecord, type LangGraphCronRow } from '../../stores/rows/langgraph-crons.rows';
import type { LangGraphCronStore } from '../../stores/types';

export function createPostgresCronStore(pool: pg.Pool): LangGraphCronStore {
  return {
    async putCron(c) {
      await pool.query(
        `INSERT INTO langgraph_crons (cron_id, org_id, thread_id, body_json, next_run_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (cron_id) DO UPDATE SET thread_id = EXCLUDED.thread_id, body_json = EXCLUDED.body_json,
           next_run_at = EXCLUDED.next_run_at, updated_at = EXCLUDED.updated_at`,
        [
          c.cronId,
          c.orgId,
          c.threadId,
          JSON.stringify(c.body),
          c.nextRunAt?.toISOString() ?? null,
          c.createdAt.toISOString(),
          c.updatedAt.toISOString(),
        ],
      );
    },
    async getCron(orgId, cronId) {
      const { rows } = await pool.query<LangGraphCronRow>(
        `SELECT * FROM langgraph_crons WHERE org_id = $1 AND cron_id = $2`,
        [orgId, cronId],
      );
      return rows[0] ? toCronRecord(rows[0]) : null;
    },
    async deleteCron(orgId, cronId) {
      const result = await pool.query(`DELETE FROM langgraph_crons WHERE org_id = $1 AND cron_id = $2`, [
        orgId,
        cronId,
      ]);
      return (result.rowCount ?? 0) > 0;
    },
    async listCrons(orgId) {
      const { rows } = await pool.query<LangGraphCronRow>(
        `SELECT * FROM langgraph_crons WHERE org_id = $1 ORDER BY created_at, cron_id`,
        [orgId],
      );
      return rows.map(toCronRecord);
    },
    async dueCrons(now, limit) {
      const { rows } = await pool.query<LangGraphCronRow>(
        `SELECT * FROM langgraph_crons WHERE next_run_at IS NOT NULL AND next_run_at <= $1
          ORDER BY next_run_at LIMIT $2`,
        [now.toISOString(), limit],
      );
      return rows.map(toCronRecord);
    },
    async claimCron(cronId, at, next, now) {
      const result = await pool.query(
        `UPDATE langgraph_crons SET next_run_at = $1, updated_at = $2 WHERE cron_id = $3 AND next_run_at = $4`,
        [next?.toISOString() ?? null, now.toISOString(), cronId, at.toISOString()],
      );
      return result.rowCount === 1;
    },
  };
}
