/**
 * LangGraph checkpoints on PostgreSQL: LangGraph's own PostgresSaver, on Prism's pool, in a schema of its own
 * (`<schema>_checkpoints`), so its tables and its migration records never mix with Prism's.
 *
 * PostgresSaver.setup() takes no lock and concurrent `CREATE TABLE IF NOT EXISTS` can fail on `pg_type`, so it
 * runs under an advisory lock: replicas starting together set it up one after the other.
 */
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type pg from 'pg';
import { withAdvisoryLock } from './database';

export function checkpointSchema(schema: string): string {
  return `${schema}_checkpoints`;
}

export async function createPostgresCheckpointer(pool: pg.Pool, schema: string): Promise<PostgresSaver> {
  const saver = new PostgresSaver(pool, undefined, { schema: checkpointSchema(schema) });
  await withAdvisoryLock(pool, `prism:checkpoints:${schema}`, () => saver.setup());
  return saver;
}
