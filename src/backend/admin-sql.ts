/**
 * The operator API's records (migration 026) on either database, with one set of SQL (the interface the admin
 * services see is src/stores/types/admin-sql.ts).
 *
 * The tables are Prism's own and use only the portable subset (TEXT ids, ISO-8601 text timestamps, integer
 * micro-dollars), so each query is written once with `?` placeholders and numbered for PostgreSQL. `exclusive` runs
 * a read-then-write on one key's budget as one step: a row lock in a transaction on PostgreSQL (every replica waits
 * on it), a keyed mutex on SQLite (one serving process).
 */
import type { Pool, PoolClient } from 'pg';
import { createKeyedMutex } from '../lib/keyed-mutex';
import type { AdminSql, SqlQuery, SqlRow } from '../stores/types/admin-sql';
import { withTransaction } from './postgres/database';
import type { RawDatabase } from './raw-database';

/** `?` placeholders as PostgreSQL's `$1, $2, …` (no query here has a literal question mark). */
const numbered = (sql: string): string => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

const pgQuery = (client: Pool | PoolClient): SqlQuery => ({
  async all(sql, params = []) {
    return (await client.query(numbered(sql), params)).rows as SqlRow[];
  },
  async run(sql, params = []) {
    return (await client.query(numbered(sql), params)).rowCount ?? 0;
  },
});

/** The part of a better-sqlite3 statement used here, with positional parameters. */
interface PreparedStatement {
  readonly reader: boolean;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { changes: number };
}

export function createAdminSql(raw: RawDatabase): AdminSql {
  if (raw.dialect === 'postgres') {
    const pool = raw.pool;
    return {
      ...pgQuery(pool),
      exclusive: (lockKey, lockSql, work) =>
        withTransaction(pool, async (client) => {
          const q = pgQuery(client);
          await q.all(lockSql, [lockKey]);
          return work(q);
        }),
    };
  }
  const db = raw.db;
  const mutex = createKeyedMutex();
  // Statements are prepared once: auth and the gateway ask for a key's policy on every keyed call.
  const prepared = new Map<string, PreparedStatement>();
  const statement = (sql: string): PreparedStatement => {
    const found = prepared.get(sql);
    if (found) return found;
    const made: PreparedStatement = db.prepare(sql);
    prepared.set(sql, made);
    return made;
  };
  const q: SqlQuery = {
    async all(sql, params = []) {
      const s = statement(sql);
      return (s.reader ? s.all(...params) : (s.run(...params), [])) as SqlRow[];
    },
    async run(sql, params = []) {
      return statement(sql).run(...params).changes;
    },
  };
  return { ...q, exclusive: (lockKey, _lockSql, work) => mutex.run(lockKey, () => work(q)) };
}
