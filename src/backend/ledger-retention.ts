/**
 * Ledger retention (PRISM_LEDGER_RETENTION_DAYS, docs/operations.md): the wallet ledger (`wallet_entries`, one row
 * per debit or credit) and the spend ledger (`key_spend`, one row per paid gateway call) grow with every call, and
 * the reads that sum them (a key's spend, the spend reports) grow with them. Rows older than the retention, whole
 * UTC days only, are rolled up into one row per day and group, with exact totals:
 *  - `key_spend`: per organisation, key and model: micros summed, `calls` counted, `created_at` the day's start;
 *  - `wallet_entries`: per organisation and reason: amounts summed, `entries` counted, the balance after the day's
 *    last entry of that group kept;
 * so balances (kept on `wallets`, never touched here), a key's spend and the spend reports by key, model or day
 * answer exactly as before (a report whose range starts or ends inside a rolled-up day counts that day whole). The
 * per-call rows are then deleted, or moved to `key_spend_archive` / `wallet_entries_archive` (the default).
 *
 * On PostgreSQL each batch is ONE statement (delete, archive and add to the day rows in one snapshot), so a row
 * written meanwhile by another replica is either rolled up or left for the next run, never lost; batches of
 * BATCH_ROWS keep each transaction short on a first run over a large ledger. On SQLite (one serving process) one
 * transaction does it all. A later run adds to an existing day row (`rollup_key` is unique).
 */
import type { RawDatabase } from './raw-database';

/** Per-call rows rolled up per PostgreSQL statement. */
const BATCH_ROWS = 20_000;

export interface LedgerRetentionOptions {
  /** Rows from before the UTC day that holds this moment are rolled up. */
  before: Date;
  /** Move the per-call rows to the archive tables (true) or delete them. */
  archive: boolean;
}

export interface LedgerRetentionResult {
  /** The cutoff used: the start of the UTC day of `before`. */
  cutoff: string;
  spendRowsRolledUp: number;
  walletRowsRolledUp: number;
}

const dayStart = (at: Date): Date => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));

const PG_SPEND = `WITH gone AS (
    DELETE FROM key_spend WHERE id IN (
      SELECT id FROM key_spend WHERE rollup_key IS NULL AND created_at < $1 ORDER BY created_at LIMIT $3)
    RETURNING *),
  kept AS (INSERT INTO key_spend_archive (id, key_id, org_id, model, micros, created_at)
           SELECT id, key_id, org_id, model, micros, created_at FROM gone WHERE $2::boolean ON CONFLICT (id) DO NOTHING),
  grouped AS (SELECT SUBSTR(created_at, 1, 10) || '|' || org_id || '|' || COALESCE(key_id, '') || '|' || model AS k,
                     SUBSTR(created_at, 1, 10) AS day, key_id, org_id, model, micros, calls FROM gone),
  days AS (INSERT INTO key_spend (id, key_id, org_id, model, micros, created_at, calls, rollup_key)
           SELECT 'day:' || k, key_id, org_id, model, SUM(micros), day || 'T00:00:00.000Z', SUM(calls), k
             FROM grouped GROUP BY k, day, key_id, org_id, model
           ON CONFLICT (rollup_key) DO UPDATE SET micros = key_spend.micros + EXCLUDED.micros,
                                                  calls = key_spend.calls + EXCLUDED.calls)
  SELECT COUNT(*)::int AS n FROM gone`;

const PG_WALLET = `WITH gone AS (
    DELETE FROM wallet_entries WHERE id IN (
      SELECT id FROM wallet_entries WHERE rollup_key IS NULL AND created_at < $1 ORDER BY id LIMIT $3)
    RETURNING *),
  kept AS (INSERT INTO wallet_entries_archive (id, org_id, amount_micros, balance_after_micros, reason, created_at)
           SELECT id, org_id, amount_micros, balance_after_micros, reason, created_at FROM gone WHERE $2::boolean
           ON CONFLICT (id) DO NOTHING),
  grouped AS (SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, * FROM gone),
  days AS (INSERT INTO wallet_entries (org_id, amount_micros, balance_after_micros, reason, created_at, entries,
                                       rollup_key)
           SELECT org_id, SUM(amount_micros), (array_agg(balance_after_micros ORDER BY id DESC))[1], reason,
                  (day || 'T00:00:00Z')::timestamptz, SUM(entries), day || '|' || org_id || '|' || reason
             FROM grouped GROUP BY day, org_id, reason
           ON CONFLICT (rollup_key) DO UPDATE SET amount_micros = wallet_entries.amount_micros + EXCLUDED.amount_micros,
             entries = wallet_entries.entries + EXCLUDED.entries, balance_after_micros = EXCLUDED.balance_after_micros)
  SELECT COUNT(*)::int AS n FROM gone`;

async function rollUpPostgres(
  raw: Extract<RawDatabase, { dialect: 'postgres' }>,
  cutoff: string,
  archive: boolean,
): Promise<Omit<LedgerRetentionResult, 'cutoff'>> {
  const drain = async (sql: string): Promise<number> => {
    let total = 0;
    for (;;) {
      const { rows } = await raw.pool.query<{ n: number }>(sql, [cutoff, archive, BATCH_ROWS]);
      const n = rows[0]?.n ?? 0;
      total += n;
      if (n < BATCH_ROWS) return total;
    }
  };
  return { spendRowsRolledUp: await drain(PG_SPEND), walletRowsRolledUp: await drain(PG_WALLET) };
}

const SQLITE_SPEND = {
  days: `INSERT INTO key_spend (id, key_id, org_id, model, micros, created_at, calls, rollup_key)
    SELECT 'day:' || k, key_id, org_id, model, SUM(micros), day || 'T00:00:00.000Z', SUM(calls), k
      FROM (SELECT SUBSTR(created_at, 1, 10) || '|' || org_id || '|' || COALESCE(key_id, '') || '|' || model AS k,
                   SUBSTR(created_at, 1, 10) AS day, key_id, org_id, model, micros, calls
              FROM key_spend WHERE rollup_key IS NULL AND created_at < @cutoff)
     WHERE true GROUP BY k
    ON CONFLICT (rollup_key) DO UPDATE SET micros = micros + excluded.micros, calls = calls + excluded.calls`,
  archive: `INSERT OR IGNORE INTO key_spend_archive (id, key_id, org_id, model, micros, created_at)
    SELECT id, key_id, org_id, model, micros, created_at FROM key_spend WHERE rollup_key IS NULL AND created_at < @cutoff`,
  remove: 'DELETE FROM key_spend WHERE rollup_key IS NULL AND created_at < @cutoff',
};

const SQLITE_WALLET = {
  // SQLite's bare columns: with MAX(id), balance_after_micros is the value of the row holding the maximum.
  days: `INSERT INTO wallet_entries (org_id, amount_micros, balance_after_micros, reason, created_at, entries, rollup_key)
    SELECT org_id, total, balance_after_micros, reason, day || 'T00:00:00.000Z', n, day || '|' || org_id || '|' || reason
      FROM (SELECT org_id, reason, SUBSTR(created_at, 1, 10) AS day, SUM(amount_micros) AS total, SUM(entries) AS n,
                   MAX(id), balance_after_micros
              FROM wallet_entries WHERE rollup_key IS NULL AND created_at < @cutoff
             GROUP BY org_id, reason, SUBSTR(created_at, 1, 10))
     WHERE true
    ON CONFLICT (rollup_key) DO UPDATE SET amount_micros = amount_micros + excluded.amount_micros,
      entries = entries + excluded.entries, balance_after_micros = excluded.balance_after_micros`,
  archive: `INSERT OR IGNORE INTO wallet_entries_archive (id, org_id, amount_micros, balance_after_micros, reason,
      created_at)
    SELECT id, org_id, amount_micros, balance_after_micros, reason, created_at FROM wallet_entries
     WHERE rollup_key IS NULL AND created_at < @cutoff`,
  remove: 'DELETE FROM wallet_entries WHERE rollup_key IS NULL AND created_at < @cutoff',
};

function rollUpSqlite(
  raw: Extract<RawDatabase, { dialect: 'sqlite' }>,
  cutoff: string,
  archive: boolean,
): Omit<LedgerRetentionResult, 'cutoff'> {
  const run = (steps: typeof SQLITE_SPEND): number => {
    raw.db.prepare(steps.days).run({ cutoff });
    if (archive) raw.db.prepare(steps.archive).run({ cutoff });
    return raw.db.prepare(steps.remove).run({ cutoff }).changes;
  };
  return raw.db.transaction(() => ({
    spendRowsRolledUp: run(SQLITE_SPEND),
    walletRowsRolledUp: run(SQLITE_WALLET),
  }))();
}

/** Rolls up (and deletes or archives) the ledger rows from before the UTC day of `options.before`. */
export async function rollUpLedger(raw: RawDatabase, options: LedgerRetentionOptions): Promise<LedgerRetentionResult> {
  const cutoff = dayStart(options.before).toISOString();
  const counts =
    raw.dialect === 'postgres'
      ? await rollUpPostgres(raw, cutoff, options.archive)
      : rollUpSqlite(raw, cutoff, options.archive);
  return { cutoff, ...counts };
}
