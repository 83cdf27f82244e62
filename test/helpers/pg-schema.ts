/**
 * PostgreSQL for tests: `PRISM_TEST_DATABASE_URL` names a database; each test (or test app) works in a schema of
 * its own, dropped afterwards with its LangGraph checkpoint schema. Without the variable the PostgreSQL runs skip
 * with one line saying how to run them.
 */
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';

export const TEST_DATABASE_URL = process.env.PRISM_TEST_DATABASE_URL || undefined;

/** `describe` when a test database is configured; else ONE skipped test whose name says how to run the suite. */
export function describePostgres(name: string, body: () => void): void {
  if (TEST_DATABASE_URL) {
    describe(name, body);
    return;
  }
  const reason = `${name}: skipped, set PRISM_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test to run it`;
  // Also on stderr: a run of every suite lists no skipped test names, only what suites print.
  process.stderr.write(`${reason}\n`);
  it.skip(reason, () => {});
}

/** A fresh schema name, or a stable one derived from `seed` (an app restarted on the same data folder). */
export function testSchemaName(seed?: string): string {
  const tag = seed ? createHash('sha256').update(seed).digest('hex').slice(0, 16) : randomBytes(8).toString('hex');
  return `prism_t_${tag}`;
}

/** Drops a test schema and its checkpoint schema. */
export async function dropTestSchema(schema: string, url = TEST_DATABASE_URL): Promise<void> {
  if (!url) return;
  if (!/^prism_t_[0-9a-f]{16}$/.test(schema)) throw new Error(`refusing to drop a schema not made by tests: ${schema}`);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.query(`DROP SCHEMA IF EXISTS "${schema}_checkpoints" CASCADE`);
  } finally {
    await client.end();
  }
}
