/**
 * The operator API's records (migration 026) as the admin services see them: one set of SQL with `?` placeholders
 * that runs on either database. The implementation (a prepared-statement cache on SQLite, numbered placeholders and
 * row locks on PostgreSQL) is src/backend/admin-sql.ts; services get this interface only.
 */

export type SqlRow = Record<string, unknown>;

/** Runs one statement; `all` answers its rows (RETURNING included). */
export interface SqlQuery {
  all(sql: string, params?: unknown[]): Promise<SqlRow[]>;
  run(sql: string, params?: unknown[]): Promise<number>;
}

export interface AdminSql extends SqlQuery {
  /** Runs `work` alone for `lockKey` (a key id), its statements in one transaction on PostgreSQL. */
  exclusive<T>(lockKey: string, lockSql: string, work: (q: SqlQuery) => Promise<T>): Promise<T>;
}

/** A BIGINT column (a string from `pg`) or an INTEGER one as a number; null stays null. */
export const num = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

/** A text column as a string (anything else a driver could answer is serialised, never `[object Object]`). */
export const str = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));
