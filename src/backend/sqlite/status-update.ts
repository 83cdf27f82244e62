/**
 * The compare-and-set status change of a record, shared by the SQLite predictions and executions stores: the new
 * status plus the columns an update sets, only while the status is one of `from`, and, when a claim is given, only
 * while the record's `attempts` still equal it (a worker whose run another one took over writes nothing).
 * The few UPDATE shapes a store uses are prepared once per database (preparing one cost more than running it: a
 * third of a millisecond per transition in a program replay's profile, bench `agents`).
 */
import { canTransition, type Status } from '../../domain/prediction';
import type { SqliteDatabase } from './database';

/** Prepared UPDATE statements by SQL text, per database; the shapes are few (column sets × `from` lengths). */
type UpdateStatement = ReturnType<SqliteDatabase['prepare']>;
const prepared = new WeakMap<SqliteDatabase, Map<string, UpdateStatement>>();
const MAX_SHAPES = 256;

function statement(db: SqliteDatabase, sql: string): UpdateStatement {
  let byText = prepared.get(db);
  if (!byText) {
    byText = new Map<string, UpdateStatement>();
    prepared.set(db, byText);
  }
  let stmt = byText.get(sql);
  if (!stmt) {
    if (byText.size >= MAX_SHAPES) byText.clear();
    stmt = db.prepare(sql);
    byText.set(sql, stmt);
  }
  return stmt;
}

/**
 * @param columns column -> value pairs to set beside status and updated_at (undefined values are skipped).
 * @returns the updated row, or null when another writer moved it first.
 * @throws Error when a status of `from` may never move to `to` (a programming error).
 */
export function transitionRow<Row>(
  db: SqliteDatabase,
  table: 'predictions' | 'executions',
  change: { id: string; from: readonly Status[]; to: Status; claim?: number | undefined },
  columns: Record<string, unknown>,
): Row | null {
  const { id, from, to, claim } = change;
  const illegal = from.find((status) => !canTransition(status, to));
  if (illegal) throw new Error(`illegal ${table.slice(0, -1)} transition ${illegal} -> ${to}`);
  const params: unknown[] = [to, new Date().toISOString()];
  const sets = ['status = ?', 'updated_at = ?'];
  for (const [column, value] of Object.entries(columns)) {
    if (value === undefined) continue;
    sets.push(`${column} = ?`);
    params.push(value);
  }
  params.push(id, ...from);
  let where = `id = ? AND status IN (${from.map(() => '?').join(', ')})`;
  if (claim !== undefined) {
    where += ' AND attempts = ?';
    params.push(claim);
  }
  const row = statement(db, `UPDATE ${table} SET ${sets.join(', ')} WHERE ${where} RETURNING *`).get(params);
  return (row as Row | undefined) ?? null;
}
