/**
 * The compare-and-set writes of a record's status, shared by predictions and executions: a transition sets the new
 * status plus the columns an update sets, only while the status is one of `from`; a progress write sets columns only
 * while the record is running. Both can also require the claim (the record's `attempts` when a worker took it), so a
 * worker whose run was taken over by another replica, after its lease ran out, writes nothing.
 */
import type pg from 'pg';
import { canTransition, type Status } from '../../domain/prediction';

export type RecordTable = 'predictions' | 'executions';

/**
 * Moves `id` to `to` if its status is one of `from` (and its attempts equal `claim`, when given).
 * @param columns column -> value pairs to set beside status and updated_at (undefined values are skipped).
 * @returns the updated row, or null when another writer moved it first.
 * @throws Error when a status of `from` may never move to `to` (a programming error).
 */
export async function transitionRow<Row extends pg.QueryResultRow>(
  pool: pg.Pool,
  table: RecordTable,
  change: { id: string; from: readonly Status[]; to: Status; claim?: number | undefined },
  columns: Record<string, unknown>,
): Promise<Row | null> {
  const { id, from, to, claim } = change;
  const illegal = from.find((status) => !canTransition(status, to));
  if (illegal) throw new Error(`illegal ${table.slice(0, -1)} transition ${illegal} -> ${to}`);
  const params: unknown[] = [id, new Date().toISOString(), [...from]];
  const sets = [`status = ${param(params, to)}`, 'updated_at = $2'];
  const where = ['id = $1', 'status = ANY($3::text[])'];
  addSets(params, sets, columns);
  if (claim !== undefined) where.push(`attempts = ${param(params, claim)}`);
  const { rows } = await pool.query<Row>(
    `UPDATE ${table} SET ${sets.join(', ')} WHERE ${where.join(' AND ')} RETURNING *`,
    params,
  );
  return rows[0] ?? null;
}

/**
 * Writes progress columns of a running record (and only with attempts = `claim`, when given): a late write, fired
 * without waiting, never overwrites a finished record or one another worker took over.
 * @returns whether the record was written.
 */
export async function progressRow(
  pool: pg.Pool,
  table: RecordTable,
  id: string,
  columns: Record<string, unknown>,
  claim?: number,
): Promise<boolean> {
  const params: unknown[] = [id, new Date().toISOString()];
  const sets = ['updated_at = $2'];
  addSets(params, sets, columns);
  const where = ['id = $1', `status = 'running'`];
  if (claim !== undefined) where.push(`attempts = ${param(params, claim)}`);
  const result = await pool.query(`UPDATE ${table} SET ${sets.join(', ')} WHERE ${where.join(' AND ')}`, params);
  return result.rowCount === 1;
}

/** Adds a parameter; returns its placeholder. */
function param(params: unknown[], value: unknown): string {
  params.push(value);
  return `$${params.length}`;
}

function addSets(params: unknown[], sets: string[], columns: Record<string, unknown>): void {
  for (const [column, value] of Object.entries(columns)) {
    if (value !== undefined) sets.push(`${column} = ${param(params, value)}`);
  }
}

/** JSON text of a value, or null for null/undefined. */
export const jsonOrNull = (value: unknown): string | null =>
  value === null || value === undefined ? null : JSON.stringify(value);
