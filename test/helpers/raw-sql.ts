/**
 * Raw SQL against a running app's database, for the few tests that must look under the stores (count rows, make a
 * record look as if its process died, break the connection). Works on either dialect: `?` placeholders are
 * numbered for PostgreSQL. The container does not expose its database; this goes through the backend seam.
 */
import { rawDatabaseOf } from '../../src/backend/raw-database';
import type { Container } from '../../src/container';
import type { SqliteDatabase } from '../../src/backend/sqlite/database';

export interface RawSql {
  dialect: 'sqlite' | 'postgres';
  rows<T>(sql: string, params?: unknown[]): Promise<T[]>;
  run(sql: string, params?: unknown[]): Promise<void>;
  count(table: string): Promise<number>;
  /** Closes the app's own connection(s), so its next store call fails (the "database is down" tests). */
  breakConnection(): Promise<void>;
  /** The SQLite handle itself, for SQLite-only tests (pragmas); throws on PostgreSQL. */
  sqlite(): SqliteDatabase;
}

const numbered = (sql: string): string => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${(n += 1)}`);
};

export function rawSql(container: Pick<Container, 'stores'>): RawSql {
  const raw = rawDatabaseOf(container.stores);
  const rows = async <T>(sql: string, params: unknown[] = []): Promise<T[]> =>
    raw.dialect === 'sqlite'
      ? (raw.db.prepare(sql).all(...params) as T[])
      : ((await raw.pool.query(numbered(sql), params)).rows as T[]);
  return {
    dialect: raw.dialect,
    rows,
    async run(sql, params = []) {
      if (raw.dialect === 'sqlite') raw.db.prepare(sql).run(...params);
      else await raw.pool.query(numbered(sql), params);
    },
    async count(table) {
      if (!/^[a-z_]+$/.test(table)) throw new Error(`not a table name: ${table}`);
      const [row] = await rows<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${table}`);
      return Number(row?.n ?? 0);
    },
    async breakConnection() {
      if (raw.dialect === 'sqlite') raw.db.close();
      else await raw.pool.end();
    },
    sqlite() {
      if (raw.dialect !== 'sqlite') throw new Error('this test needs the SQLite backend');
      return raw.db;
    },
  };
}
