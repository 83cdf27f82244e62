/**
 * `prism db copy`: moves a single-user install (its SQLite file and its blobs) onto PostgreSQL (and, optionally,
 * another blob store), then proves the copy: per table, the row count and an order-independent checksum of the
 * rows (each row normalised the same way on both sides: times as ISO-8601, JSON re-serialised with sorted keys,
 * flags as 1/0) must match; per blob, the bytes copied must hash to their address.
 *
 * Safe to re-run: rows go in with `ON CONFLICT DO NOTHING` (ids are kept, identity columns included, and their
 * sequences moved past the copied ids), blobs already in the target are left alone. A target that already holds
 * rows the source lacks fails the check with the table named, rather than passing silently.
 *
 * Not carried: LangGraph checkpoints of agent executions still in flight (their formats differ between the savers);
 * the command refuses while such executions exist, so finish or cancel them first.
 */
import { createHash } from 'node:crypto';
import type { BlobStore } from '../blobs/types';
import type { SqliteDatabase } from '../backend/sqlite/database';
import { quoteIdent, type PgPool } from '../backend/postgres/database';

/** Every table Prism keeps, parents before children (foreign keys), with its primary key. */
export const COPIED_TABLES: readonly { name: string; key: readonly string[] }[] = [
  { name: 'organisations', key: ['id'] },
  { name: 'users', key: ['id'] },
  { name: 'api_keys', key: ['id'] },
  { name: 'wallets', key: ['org_id'] },
  { name: 'wallet_entries', key: ['id'] },
  { name: 'blobs', key: ['sha256'] },
  { name: 'files', key: ['id'] },
  { name: 'predictions', key: ['id'] },
  { name: 'prediction_inputs', key: ['prediction_id', 'position'] },
  { name: 'webhook_deliveries', key: ['id'] },
  { name: 'feedback', key: ['id'] },
  { name: 'skills', key: ['id'] },
  { name: 'agents', key: ['id'] },
  { name: 'executions', key: ['id'] },
  { name: 'execution_webhook_deliveries', key: ['id'] },
  { name: 'artifacts', key: ['object_id'] },
  { name: 'skill_programs', key: ['skill_id', 'skill_version', 'signature'] },
  { name: 'chat_threads', key: ['id'] },
  { name: 'chat_messages', key: ['thread_id', 'seq'] },
  { name: 'evaluations', key: ['id'] },
  { name: 'evaluation_items', key: ['evaluation_id', 'position'] },
  { name: 'oauth_clients', key: ['client_id'] },
  { name: 'oauth_requests', key: ['id_hash'] },
  { name: 'oauth_codes', key: ['code_hash'] },
  { name: 'oauth_tokens', key: ['token_hash'] },
  { name: 'mcp_servers', key: ['id'] },
  { name: 'langgraph_docs', key: ['org_id', 'kind', 'id'] },
  { name: 'langgraph_crons', key: ['cron_id'] },
  // the operator's API (migration 026, docs/admin.md)
  { name: 'api_key_policies', key: ['key_id'] },
  { name: 'key_budget_holds', key: ['id'] },
  { name: 'org_budgets', key: ['org_id'] },
  { name: 'org_budget_holds', key: ['id'] },
  { name: 'key_spend', key: ['id'] },
  { name: 'admin_audit', key: ['id'] },
  // ledger retention (migration 030, src/backend/ledger-retention.ts)
  { name: 'key_spend_archive', key: ['id'] },
  { name: 'wallet_entries_archive', key: ['id'] },
];

/** PostgreSQL takes at most 65,535 parameters per statement: a batch is as many rows as fit under this. */
const PARAMETERS_PER_STATEMENT = 60_000;
const MAX_BATCH = 5_000;
/** Target rows read back per statement for the checksum (in primary key order, from where the last page ended). */
const READ_PAGE = 10_000;

export interface TableReport {
  table: string;
  source: number;
  target: number;
  copied: number;
  checksumMatches: boolean;
}

export interface CopyReport {
  tables: TableReport[];
  blobs: { total: number; copied: number; present: number; mismatched: string[] } | null;
  ok: boolean;
}

interface ColumnInfo {
  name: string;
  type: string;
  identity: boolean;
}

async function targetColumns(pool: PgPool, table: string): Promise<Map<string, ColumnInfo>> {
  const { rows } = await pool.query<{ column_name: string; data_type: string; is_identity: string }>(
    `SELECT column_name, data_type, is_identity FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = $1`,
    [table],
  );
  return new Map(
    rows.map((r) => [r.column_name, { name: r.column_name, type: r.data_type, identity: r.is_identity === 'YES' }]),
  );
}

/** A value as the target column takes it. */
function toTarget(value: unknown, column: ColumnInfo): unknown {
  if (value === null || value === undefined) return null;
  if (column.type === 'boolean') return value === 1 || value === true;
  return value;
}

/** One row in the form both sides agree on, for the checksum. */
function normalise(row: Record<string, unknown>, columns: readonly ColumnInfo[]): string {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical);
    if (value && typeof value === 'object') {
      return Object.fromEntries(
        Object.keys(value)
          .sort()
          .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
      );
    }
    return value;
  };
  return JSON.stringify(
    columns.map((c) => {
      const value = row[c.name];
      if (value === null || value === undefined) return null;
      if (c.type === 'json' || c.type === 'jsonb') return canonical(JSON.parse(value as string));
      if (c.type === 'boolean') return value === 1 || value === true ? 1 : 0;
      if (c.type.startsWith('timestamp')) return new Date(value as string).toISOString();
      if (typeof value === 'number' || typeof value === 'bigint') return Number(value);
      return value;
    }),
  );
}

/** Order-independent: the sum of each row's hash (first 8 bytes) modulo 2^64. */
function addRow(sum: bigint, normalised: string): bigint {
  const digest = createHash('sha256').update(normalised).digest();
  return (sum + digest.readBigUInt64BE(0)) & 0xffff_ffff_ffff_ffffn;
}

/** The order-independent checksum and count of the target's rows, read a page at a time in primary key order. */
async function targetChecksum(
  pool: PgPool,
  table: string,
  key: readonly string[],
  columns: readonly ColumnInfo[],
): Promise<{ count: number; sum: bigint }> {
  const names = columns.map((c) => quoteIdent(c.name)).join(', ');
  const keys = key.map(quoteIdent).join(', ');
  let count = 0;
  let sum = 0n;
  let last: unknown[] | null = null;
  for (;;) {
    const after: string = last ? `WHERE (${keys}) > (${key.map((_, i) => `$${i + 1}`).join(', ')})` : '';
    const { rows }: { rows: Record<string, unknown>[] } = await pool.query<Record<string, unknown>>(
      `SELECT ${names} FROM ${table} ${after} ORDER BY ${keys} LIMIT ${READ_PAGE}`,
      last ?? [],
    );
    for (const row of rows) {
      count += 1;
      sum = addRow(sum, normalise(row, columns));
    }
    const end: Record<string, unknown> | undefined = rows.at(-1);
    if (!end || rows.length < READ_PAGE) return { count, sum };
    last = key.map((k) => end[k]);
  }
}

async function copyTable(
  source: SqliteDatabase,
  pool: PgPool,
  { name: table, key }: { name: string; key: readonly string[] },
  onRows: (rows: number) => void,
): Promise<TableReport> {
  const target = await targetColumns(pool, table);
  if (target.size === 0) throw new Error(`the target schema has no table ${table}: run prism db migrate on it`);
  const sourceNames = (source.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
  const missing = sourceNames.filter((name) => !target.has(name));
  if (missing.length > 0) throw new Error(`the target's ${table} lacks columns ${missing.join(', ')}: migrate it`);
  const columns = sourceNames.map((name) => target.get(name) as ColumnInfo);
  const overriding = columns.some((c) => c.identity) ? 'OVERRIDING SYSTEM VALUE' : '';
  const names = columns.map((c) => quoteIdent(c.name)).join(', ');

  const batchRows = Math.max(1, Math.min(MAX_BATCH, Math.floor(PARAMETERS_PER_STATEMENT / columns.length)));
  let copied = 0;
  let sourceCount = 0;
  let sourceSum = 0n;
  const rows = source.prepare(`SELECT * FROM ${table} ORDER BY rowid`).iterate() as Iterable<Record<string, unknown>>;
  let batch: Record<string, unknown>[] = [];
  // One insert in flight while the next batch is read and hashed.
  let inFlight: Promise<void> = Promise.resolve();
  const insert = async (rowsToWrite: Record<string, unknown>[]): Promise<void> => {
    const params: unknown[] = [];
    const tuples = rowsToWrite.map((row) => {
      const slots = columns.map((c) => {
        params.push(toTarget(row[c.name], c));
        return `$${params.length}`;
      });
      return `(${slots.join(', ')})`;
    });
    const result = await pool.query(
      `INSERT INTO ${table} (${names}) ${overriding} VALUES ${tuples.join(', ')} ON CONFLICT DO NOTHING`,
      params,
    );
    copied += result.rowCount ?? 0;
    onRows(rowsToWrite.length);
  };
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const rowsToWrite = batch;
    batch = [];
    await inFlight;
    inFlight = insert(rowsToWrite);
  };
  try {
    for (const row of rows) {
      sourceCount += 1;
      sourceSum = addRow(sourceSum, normalise(row, columns));
      batch.push(row);
      if (batch.length >= batchRows) await flush();
    }
    await flush();
  } finally {
    // An insert that failed is reported here (after a failure no further batch is started).
    await inFlight;
  }
  for (const c of columns.filter((column) => column.identity)) {
    await pool.query(
      `SELECT setval(pg_get_serial_sequence($1, $2), GREATEST((SELECT MAX(${quoteIdent(c.name)}) FROM ${table}), 1))`,
      [table, c.name],
    );
  }

  const { count: targetCount, sum: targetSum } = await targetChecksum(pool, table, key, columns);
  return {
    table,
    source: sourceCount,
    target: targetCount,
    copied,
    checksumMatches: sourceCount === targetCount && sourceSum === targetSum,
  };
}

async function copyBlobs(source: SqliteDatabase, from: BlobStore, to: BlobStore): Promise<CopyReport['blobs']> {
  const hashes = (source.prepare('SELECT sha256 FROM blobs ORDER BY sha256').all() as { sha256: string }[]).map(
    (r) => r.sha256,
  );
  let copied = 0;
  let present = 0;
  const mismatched: string[] = [];
  for (const sha256 of hashes) {
    const existing = await to.open(sha256);
    if (existing) {
      existing.destroy();
      present += 1;
      continue;
    }
    const stream = await from.open(sha256);
    if (!stream) {
      mismatched.push(sha256);
      continue;
    }
    const staged = await to.stage(stream, { maxBytes: Number.MAX_SAFE_INTEGER });
    if (staged.stored.sha256 !== sha256) {
      await staged.discard();
      mismatched.push(sha256);
      continue;
    }
    await staged.commit();
    copied += 1;
  }
  return { total: hashes.length, copied, present, mismatched };
}

/**
 * Copies every record of `source` into the (migrated) schema `pool` reads, and every blob from `blobs.from` into
 * `blobs.to` when given. @throws Error when agent executions are still in flight (their checkpoints do not move).
 */
export async function copyToPostgres(
  source: SqliteDatabase,
  pool: PgPool,
  blobs: { from: BlobStore; to: BlobStore } | null,
  onTable: (report: TableReport) => void = () => undefined,
  progress: (total: number) => { add(rows: number): void; finish(): void } = () => ({
    add: () => undefined,
    finish: () => undefined,
  }),
): Promise<CopyReport> {
  const inFlight = source
    .prepare(`SELECT COUNT(*) AS n FROM executions WHERE status IN ('running', 'paused')`)
    .get() as { n: number };
  if (inFlight.n > 0) {
    throw new Error(
      `${inFlight.n} agent executions are running or paused; their checkpoints are not copied: let them finish first`,
    );
  }
  const total = COPIED_TABLES.reduce(
    (sum, { name }) => sum + (source.prepare(`SELECT COUNT(*) AS n FROM ${name}`).get() as { n: number }).n,
    0,
  );
  const bar = progress(total);
  const tables: TableReport[] = [];
  for (const table of COPIED_TABLES) {
    const report = await copyTable(source, pool, table, (rows) => bar.add(rows));
    tables.push(report);
    onTable(report);
  }
  bar.finish();
  const blobReport = blobs ? await copyBlobs(source, blobs.from, blobs.to) : null;
  const ok = tables.every((t) => t.checksumMatches) && (blobReport === null || blobReport.mismatched.length === 0);
  return { tables, blobs: blobReport, ok };
}
