/**
 * LangGraph checkpoints on PostgreSQL: LangGraph's own PostgresSaver, in a schema of its own
 * (`<schema>_checkpoints`), so its tables and its migration records never mix with Prism's. It gets a small pool
 * of its own on the same database: Prism's pool reads JSON columns back as text (one row mapper for both
 * dialects), and PostgresSaver reads its JSONB checkpoints expecting objects — on Prism's pool a resumed run found
 * an empty state (the agents-batch-restart suite on PostgreSQL caught it).
 *
 * PostgresSaver.setup() takes no lock and concurrent `CREATE TABLE IF NOT EXISTS` can fail on `pg_type`, so it
 * runs under an advisory lock: replicas starting together set it up one after the other.
 */
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { createPool, withAdvisoryLock } from './database';

export function checkpointSchema(schema: string): string {
  return `${schema}_checkpoints`;
}

/**
 * A saver set up (once, under the lock) on its own pool; `end()` closes that pool. The lock holds one connection
 * while setup() runs on another, so the pool needs at least two.
 */
export async function createPostgresCheckpointer(
  url: string,
  schema: string,
  max = 4,
): Promise<{ saver: PostgresSaver; end: () => Promise<void> }> {
  const pool = createPool({ url, schema, max: Math.max(2, max), parsing: 'pg' });
  try {
    const saver = new PostgresSaver(pool, undefined, { schema: checkpointSchema(schema) });
    await withAdvisoryLock(pool, `prism:checkpoints:${schema}`, () => saver.setup());
    return { saver, end: () => (pool.ended ? Promise.resolve() : pool.end()) };
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
}
