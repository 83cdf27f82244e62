/**
 * The compare-and-set UPDATE of a record's status, shared by predictions and executions: the new status plus the
 * columns an update sets, applied only while the status is one of `from`, returning the row (none: another writer
 * moved it first).
 */

export interface StatusUpdate {
  sql: string;
  params: unknown[];
}

/** @param columns column -> value pairs to set beside status and updated_at (undefined values are skipped). */
export function statusUpdate(
  table: 'predictions' | 'executions',
  id: string,
  from: readonly string[],
  to: string,
  columns: Record<string, unknown>,
): StatusUpdate {
  const params: unknown[] = [id, to, new Date().toISOString(), [...from]];
  const sets = ['status = $2', 'updated_at = $3'];
  for (const [column, value] of Object.entries(columns)) {
    if (value === undefined) continue;
    params.push(value);
    sets.push(`${column} = $${params.length}`);
  }
  return {
    sql: `UPDATE ${table} SET ${sets.join(', ')} WHERE id = $1 AND status = ANY($4::text[]) RETURNING *`,
    params,
  };
}

/** JSON text of a value, or null for null/undefined. */
export const jsonOrNull = (value: unknown): string | null =>
  value === null || value === undefined ? null : JSON.stringify(value);
