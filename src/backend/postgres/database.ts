/**
 * The PostgreSQL connection pool and its migrations.
 *
 * Every connection of the pool has `search_path` set to Prism's schema, so store SQL names bare tables. Column types
 * are read back as the SQLite stores read theirs (timestamps as ISO-8601 text, JSON as its text, bigint as a
 * number, booleans as 1/0), so both dialects share one row mapper per record type and the stores differ only in
 * their SQL. Numbered `.sql` migrations in `migrations/` run once each, in order, each in its own transaction, all
 * under `pg_advisory_lock` so replicas starting together never race each other.
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';

const MIGRATIONS_DIR = path.join(__dirname, 'migrations');

/** PostgreSQL type oids whose parsers differ from pg's defaults. */
const OID = { bool: 16, int8: 20, json: 114, timestamptz: 1184, timestamp: 1114, jsonb: 3802 } as const;

const parseTimestamp = pg.types.getTypeParser(OID.timestamptz) as (text: string) => Date;
const TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    switch (oid) {
      case OID.bool:
        return (text: string) => (text === 't' ? 1 : 0);
      case OID.int8:
        return (text: string) => Number(text);
      case OID.json:
      case OID.jsonb:
        return (text: string) => text;
      case OID.timestamptz:
        return (text: string) => parseTimestamp(text).toISOString();
      default:
        return pg.types.getTypeParser(oid, format) as (text: string) => unknown;
    }
  },
};

/** A double-quoted SQL identifier (schema names are validated by the config, this is the second guard). */
export function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`not a safe SQL identifier: ${name}`);
  return `"${name}"`;
}

export interface PostgresOptions {
  url: string;
  schema: string;
  max?: number;
  /**
   * 'prism' (default): rows read back as the SQLite stores read theirs. 'pg': pg's own parsing (JSON as objects,
   * times as Date), which LangGraph's PostgresSaver expects.
   */
  parsing?: 'prism' | 'pg';
}

/** A pool whose connections read and write `schema` (created on first migration). */
export function createPool(options: PostgresOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 10,
    ...(options.parsing === 'pg' ? {} : { types: TYPES }),
    options: `-c search_path=${quoteIdent(options.schema)}`,
    application_name: options.parsing === 'pg' ? 'prism-checkpoints' : 'prism',
  });
  // An idle client whose server went away must not crash the process; the next query reports the failure.
  pool.on('error', () => undefined);
  return pool;
}

/** The pool type, for the callers above the backend (the copy tool) that must not import the driver. */
export type PgPool = pg.Pool;

/** Anything `query` runs on: the pool, or one client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

/** Runs `work` in one transaction on one client; rolls back when it throws. */
export async function withTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Runs `work` holding the session advisory lock named `name` (waits for other holders). */
export async function withAdvisoryLock<T>(pool: pg.Pool, name: string, work: (client: pg.PoolClient) => Promise<T>) {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
    try {
      return await work(client);
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [name]);
    }
  } finally {
    client.release();
  }
}

/** Numbered migration files of a folder, in order. */
export function migrationFiles(dir = MIGRATIONS_DIR): { version: number; name: string }[] {
  return fs
    .readdirSync(dir)
    .map((name) => ({ name, version: Number(/^(\d+)_.*\.sql$/.exec(name)?.[1]) }))
    .filter((m) => Number.isInteger(m.version))
    .sort((a, b) => a.version - b.version);
}

/**
 * Creates the schema if needed and applies every migration not yet recorded in its `schema_migrations`, under an
 * advisory lock per schema. @returns the versions applied now.
 */
export async function migratePostgres(pool: pg.Pool, schema: string, dir = MIGRATIONS_DIR): Promise<number[]> {
  return withAdvisoryLock(pool, `prism:migrate:${schema}`, async (client) => {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)',
    );
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((r) => r.version));
    const pending = migrationFiles(dir).filter((m) => !applied.has(m.version));
    for (const migration of pending) {
      const sql = fs.readFileSync(path.join(dir, migration.name), 'utf8');
      await client.query('BEGIN');
      try {
        await client.query(sql);
        await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, now())', [
          migration.version,
        ]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new Error(`migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
      }
    }
    return pending.map((m) => m.version);
  });
}

/** Versions recorded in `schema_migrations` (empty when the schema has none yet). */
export async function appliedMigrations(pool: pg.Pool): Promise<number[]> {
  const exists = await pool.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`);
  if (!exists.rows[0]?.t) return [];
  const { rows } = await pool.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
  return rows.map((r) => r.version);
}
