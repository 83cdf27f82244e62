/**
 * The langgraph-crons tables' rows as both SQL dialects answer them, and their mapping to domain records: written once,
 * imported by the SQLite and the PostgreSQL stores alike, so neither backend imports the other.
 */
import type { LangGraphCronRecord } from '../types';

export interface LangGraphCronRow {
  cron_id: string;
  org_id: string;
  thread_id: string | null;
  body_json: string | Record<string, unknown>;
  next_run_at: string | Date | null;
  created_at: string | Date;
  updated_at: string | Date;
}

export const toCronRecord = (r: LangGraphCronRow): LangGraphCronRecord => ({
  cronId: r.cron_id,
  orgId: r.org_id,
  threadId: r.thread_id,
  body: typeof r.body_json === 'string' ? (JSON.parse(r.body_json) as Record<string, unknown>) : r.body_json,
  nextRunAt: r.next_run_at === null ? null : new Date(r.next_run_at),
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
});
