/**
 * The data side at size (issue 43, item 4): p50 and p95 of the store operations the API uses, on PostgreSQL, with
 * executions, predictions, files, the wallet ledger and the spend ledger each filled to 10k, 100k and 1M rows (50
 * organisations, a realistic spread of statuses and of dates over a year). The stores are the app's own
 * (src/backend/postgres), on a schema of its own dropped afterwards; rows are generated in the database
 * (generate_series), so a million rows per table takes seconds, not the API's minutes.
 *
 * At each size every operation is measured twice: without the indexes of migration 029 (dropped for the pass, so
 * "before" is the schema as it was) and with them, in the same run. `--explain` prints EXPLAIN (ANALYZE, BUFFERS)
 * of each operation's statements at the largest size (on stderr). `--rows 1e5` stops at that size (default 1e6). The target is
 * p50 <= 1 ms at 1M rows, flat from 10k. Runs when PRISM_BENCH_DATABASE_URL (or PRISM_TEST_DATABASE_URL) is set,
 * else skips with one line.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { createPool, migratePostgres, quoteIdent } from '../src/backend/postgres/database';
import { postgresStores } from '../src/backend/postgres/records';
import { createAdminSql } from '../src/backend/admin-sql';
import { EMPTY_USAGE } from '../src/domain/prediction';
import type { Stores } from '../src/stores/types';
import type { GroupReport } from './harness';

const ORGS = 50;
/** The organisation every operation asks about (each holds 1/50 of every table). */
const ORG = 'org-07';
const ITERATIONS = 200;
const WARMUP = 20;
const MIGRATION_029 = path.resolve(__dirname, '../src/backend/postgres/migrations/029_store_indexes_at_size.sql');

const sizesUpTo = (max: number): number[] => [10_000, 100_000, 1_000_000].filter((n) => n <= max);

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  if (i >= 0) return process.argv[i + 1];
  return process.argv.find((a) => a.startsWith(`${name}=`))?.split('=')[1];
}

/** An ISO-8601 text timestamp as the admin tables keep them, from a timestamptz expression. */
const isoText = (expr: string): string => `to_char((${expr}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const orgOf = (n: string): string => `'org-' || lpad((${n} % ${ORGS})::text, 2, '0')`;
/** A time in the last year, spread evenly (n-th row) with some noise, so the newest rows are the last ones. */
const when = (n: string, total: number): string =>
  `now() - make_interval(secs => (${total} - ${n}) * (31536000.0 / ${total}) + random() * 60)`;

/** Grows every table from `from` to `to` rows. */
async function fill(pool: pg.Pool, from: number, to: number): Promise<void> {
  const range = `generate_series(${from + 1}, ${to}) AS n`;
  const statusOf = (n: string): string =>
    `CASE WHEN ${n} % 97 = 0 THEN 'failed' WHEN ${n} % 1013 = 0 THEN 'pending' ELSE 'completed' END`;
  const request = JSON.stringify({ model: 'prism-1', domain: 'document.invoice', config: { detail: 'auto' } });
  await pool.query(
    `INSERT INTO predictions (id, org_id, kind, model, domain, status, request_json, inputs_json, response_json,
                              usage_json, attempts, created_at, updated_at, completed_at)
     SELECT 'p-' || n, ${orgOf('n')}, 'document', 'prism-1', 'document.invoice', ${statusOf('n')}, $1, '[]',
            '{"invoice_id":"B-1","total":12.5}', $2, 1, ${when('n', 1_000_000)}, now(), now() FROM ${range}`,
    [request, JSON.stringify(EMPTY_USAGE)],
  );
  await pool.query(
    `INSERT INTO executions (id, org_id, name, model, status, execution_mode, request_json, response_json,
                             usage_json, steps_json, attempts, created_at, updated_at, completed_at)
     SELECT 'e-' || n, ${orgOf('n')}, 'support-agent', 'prism-agent-1', ${statusOf('n')}, 'agent', $1,
            '{"answer":"done"}', '{}', '[{"kind":"tool","name":"lookup"}]', 1, ${when('n', 1_000_000)}, now(), now()
       FROM ${range}`,
    [JSON.stringify({ input: 'hello', max_steps: 8 })],
  );
  await pool.query(
    `INSERT INTO files (id, org_id, filename, purpose, status, bytes, content_type, md5, created_at)
     SELECT 'f-' || n, ${orgOf('n')}, 'scan-' || n || '.pdf', 'extraction',
            CASE WHEN n % 211 = 0 THEN 'pending' ELSE 'uploaded' END, 1000 + n % 5000, 'application/pdf',
            md5(n::text), ${when('n', 1_000_000)} FROM ${range}`,
  );
  await pool.query(
    `INSERT INTO wallet_entries (org_id, amount_micros, balance_after_micros, reason, created_at)
     SELECT ${orgOf('n')}, -(100 + n % 900), 1000000000 - n, 'chat.completions prism-chat-' || (n % 3),
            ${when('n', 1_000_000)} FROM ${range}`,
  );
  await pool.query(
    `INSERT INTO key_spend (id, key_id, org_id, model, micros, created_at)
     SELECT 'ks-' || n, 'key-' || lpad((n % ${ORGS})::text, 2, '0') || '-' || (n / ${ORGS} % 4), ${orgOf('n')},
            'prism-chat-' || (n % 3), 100 + n % 900, ${isoText(when('n', 1_000_000))} FROM ${range}`,
  );
  // As autovacuum leaves a table in steady state (visibility map set, so index-only scans can skip the heap).
  await pool.query('VACUUM (ANALYZE) predictions, executions, files, wallet_entries, key_spend');
}

/** Organisations, a user and four keys each, and a funded wallet: the parents of every filled row. */
async function seedParents(pool: pg.Pool): Promise<void> {
  const orgs = `generate_series(0, ${ORGS - 1}) AS o`;
  const id = `lpad(o::text, 2, '0')`;
  await pool.query(`INSERT INTO organisations (id, name, tier, created_at) SELECT 'org-' || ${id}, 'bench ' || o,
    'pro', now() FROM ${orgs}`);
  await pool.query(`INSERT INTO users (id, org_id, name, created_at) SELECT 'user-' || ${id}, 'org-' || ${id},
    'owner', now() FROM ${orgs}`);
  await pool.query(`INSERT INTO api_keys (id, org_id, user_id, name, key_hash, prefix, created_at)
    SELECT 'key-' || ${id} || '-' || k, 'org-' || ${id}, 'user-' || ${id}, 'k', md5(o || '-' || k), 'p', now()
      FROM ${orgs}, generate_series(0, 3) AS k`);
  await pool.query(`INSERT INTO wallets (org_id, balance_micros, updated_at) SELECT 'org-' || ${id}, 1000000000000,
    now() FROM ${orgs}`);
}

/** Ids of the measured organisation's rows, spread over the table (oldest to newest). */
async function sample(pool: pg.Pool, table: string, prefix: string, size: number): Promise<string[]> {
  const step = Math.max(ORGS, Math.floor(size / 300 / ORGS) * ORGS);
  const { rows } = await pool.query<{ id: string }>(
    `SELECT id FROM ${table}
      WHERE id IN (SELECT '${prefix}-' || n FROM generate_series(7, ${size}, ${step}) AS n) AND org_id = '${ORG}'`,
  );
  return rows.map((r) => r.id);
}

type Operation = () => Promise<void>;

/** The operations the API runs, on the measured organisation, each cycling through sampled rows. */
async function operations(pool: pg.Pool, stores: Stores, size: number): Promise<Record<string, Operation>> {
  const sql = createAdminSql({ dialect: 'postgres', pool, schema: '' });
  const predictions = await sample(pool, 'predictions', 'p', size);
  const executions = await sample(pool, 'executions', 'e', size);
  const files = await sample(pool, 'files', 'f', size);
  // Rows to move running -> completed, one per iteration (a status update the job runner makes).
  const running = async (table: string, ids: string[]): Promise<string[]> => {
    const picked = ids.slice(0, Math.min(ids.length, ITERATIONS + WARMUP));
    await pool.query(`UPDATE ${table} SET status = 'running' WHERE id = ANY($1::text[])`, [picked]);
    return picked;
  };
  const runningPredictions = await running('predictions', predictions);
  const runningExecutions = await running('executions', executions);
  const { rows: md5Rows } = await pool.query<{ md5: string }>('SELECT md5 FROM files WHERE id = ANY($1::text[])', [
    files,
  ]);
  const cycle = <T>(list: T[]): (() => T) => {
    let i = 0;
    return () => list[(i += 1) % list.length] as T;
  };
  const nextPrediction = cycle(predictions);
  const nextExecution = cycle(executions);
  const nextFile = cycle(files);
  const nextMd5 = cycle(md5Rows.map((r) => r.md5));
  const nextKey = cycle([0, 1, 2, 3].map((k) => `key-07-${k}`));
  const must = (found: unknown, what: string): void => {
    if (found === null || found === undefined) throw new Error(`${what} not found`);
  };
  let cursor: string | null = null;
  let p = 0;
  let e = 0;
  const done = { response: { invoice_id: 'B-2' }, usage: EMPTY_USAGE, completedAt: new Date() };
  return {
    'prediction get': async () => must(await stores.predictions.get(ORG, nextPrediction()), 'prediction'),
    'prediction list newest (20)': async () => void (await stores.predictions.list(ORG, { skip: 0, limit: 20 })),
    'prediction list page 5 (skip 80)': async () => void (await stores.predictions.list(ORG, { skip: 80, limit: 20 })),
    'prediction status update': async () => {
      const id = runningPredictions[p++ % runningPredictions.length] as string;
      await stores.predictions.transition(id, ['running'], 'completed', done);
    },
    'execution get': async () => must(await stores.executions.get(ORG, nextExecution()), 'execution'),
    'execution list newest (20)': async () => void (await stores.executions.list(ORG, { skip: 0, limit: 20 })),
    'execution status update': async () => {
      const id = runningExecutions[e++ % runningExecutions.length] as string;
      await stores.executions.transition(id, ['running'], 'completed', {
        response: done.response,
        completedAt: done.completedAt,
      });
    },
    'execution stalled sweep': async () => void (await stores.executions.stalled(new Date(Date.now() - 60_000))),
    'file get': async () => must(await stores.files.get(ORG, nextFile()), 'file'),
    'file list newest (20)': async () => {
      const page = await stores.files.list(ORG, { skip: 0, limit: 21 });
      cursor = page.at(-1)?.id ?? null;
    },
    'file list after cursor (20)': async () =>
      void (await stores.files.list(ORG, { skip: 0, limit: 21, ...(cursor ? { after: cursor } : {}) })),
    'file list after deep cursor (20)': async () =>
      void (await stores.files.list(ORG, { skip: 0, limit: 21, after: nextFile() })),
    'file lookup by md5': async () => void (await stores.files.findByMd5(ORG, nextMd5())),
    'ledger append (credit)': async () => void (await stores.wallets.credit(ORG, 1, 'bench top-up')),
    'ledger hold + settle': async () => {
      const hold = await stores.wallets.hold(ORG, 5_000, 60_000);
      if (hold === null) throw new Error('hold refused');
      await stores.wallets.settle(hold, ORG, 1_000, 'chat.completions prism-chat-0');
    },
    'balance read': async () => void (await stores.wallets.balance(ORG)),
    "key's spend (admin key view)": async () =>
      void (await sql.all('SELECT COALESCE(SUM(micros), 0) AS m FROM key_spend WHERE key_id = ?', [nextKey()])),
  };
}

interface Timing {
  p50: number;
  p95: number;
}

async function time(run: Operation): Promise<Timing> {
  for (let i = 0; i < WARMUP; i += 1) await run();
  const samples: number[] = [];
  for (let i = 0; i < ITERATIONS; i += 1) {
    const start = performance.now();
    await run();
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  const at = (q: number): number => samples[Math.min(samples.length - 1, Math.floor(samples.length * q))] ?? 0;
  return { p50: at(0.5), p95: at(0.95) };
}

/** The indexes migration 029 creates (dropped for the "before" pass, made again from the file for "after"). */
function indexesOf029(): { names: string[]; sql: string } {
  if (!fs.existsSync(MIGRATION_029)) return { names: [], sql: '' };
  const sql = fs.readFileSync(MIGRATION_029, 'utf8');
  const names = [...sql.matchAll(/CREATE INDEX (?:IF NOT EXISTS )?(\w+)/g)].map((m) => m[1] as string);
  return { names, sql };
}

/** Records the statements each pool.query runs while `capture` is on (for EXPLAIN). */
function captureQueries(pool: pg.Pool): { start(): void; stop(): { text: string; values: unknown[] }[] } {
  let seen: { text: string; values: unknown[] }[] | null = null;
  const original = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  (pool as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args: unknown[]) => {
    if (seen && typeof args[0] === 'string') seen.push({ text: args[0], values: (args[1] as unknown[]) ?? [] });
    return original(...args);
  };
  return {
    start: () => void (seen = []),
    stop: () => {
      const got = seen ?? [];
      seen = null;
      return got;
    },
  };
}

async function explain(pool: pg.Pool, ops: Record<string, Operation>): Promise<string[]> {
  const capture = captureQueries(pool);
  const out: string[] = [];
  for (const [name, run] of Object.entries(ops)) {
    capture.start();
    await run();
    const statements = capture.stop().filter((s) => /^\s*(SELECT|UPDATE|WITH)/i.test(s.text));
    for (const s of statements) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${s.text}`,
          s.values,
        );
        out.push(`-- ${name}: ${s.text.replace(/\s+/g, ' ').slice(0, 160)}`, ...rows.map((r) => r['QUERY PLAN']));
      } finally {
        await client.query('ROLLBACK');
        client.release();
      }
    }
  }
  return out;
}

export async function storesSizeBenchmarks(): Promise<GroupReport> {
  const url = process.env.PRISM_BENCH_DATABASE_URL || process.env.PRISM_TEST_DATABASE_URL;
  if (!url) {
    return { notes: ['stores-size bench: skipped (set PRISM_BENCH_DATABASE_URL=postgres://… to run it)'] };
  }
  const maxRows = Number(argValue('--rows') ?? process.env.PRISM_BENCH_ROWS ?? 1e6);
  const sizes = sizesUpTo(maxRows);
  const schema = `prism_bench_size_${randomBytes(4).toString('hex')}`;
  const pool = createPool({ url, schema, max: 4 });
  const figures: Record<string, number> = {};
  const table: string[] = [];
  const plans: string[] = [];
  const index029 = indexesOf029();
  const fillSeconds: string[] = [];
  try {
    await migratePostgres(pool, schema);
    await seedParents(pool);
    let filled = 0;
    for (const size of sizes) {
      const started = performance.now();
      await fill(pool, filled, size);
      filled = size;
      fillSeconds.push(`${size.toLocaleString('en')}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
      const label = size >= 1e6 ? `${size / 1e6}M` : `${size / 1e3}k`;
      for (const pass of ['before', 'after'] as const) {
        if (index029.names.length === 0 && pass === 'before') continue;
        if (pass === 'before') {
          for (const name of index029.names) await pool.query(`DROP INDEX IF EXISTS ${quoteIdent(name)}`);
        } else if (index029.names.length > 0) {
          await pool.query(index029.sql.replace(/CREATE INDEX (?!IF NOT EXISTS)/g, 'CREATE INDEX IF NOT EXISTS '));
        }
        await pool.query('ANALYZE');
        const stores = postgresStores(pool, schema);
        const ops = await operations(pool, stores, size);
        for (const [name, run] of Object.entries(ops)) {
          const t = await time(run);
          figures[`${name}.p50_ms.${label}${pass === 'before' ? '.before_029' : ''}`] = Number(t.p50.toFixed(3));
          if (pass === 'after' && size === sizes.at(-1)) figures[`${name}.p95_ms.${label}`] = Number(t.p95.toFixed(3));
          table.push(`${label.padEnd(5)} ${pass.padEnd(7)} ${name.padEnd(36)} ${t.p50.toFixed(3)} ${t.p95.toFixed(3)}`);
        }
        if (size === sizes.at(-1) && process.argv.includes('--explain')) {
          plans.push(`== ${label} ${pass} migration 029 ==`, ...(await explain(pool, ops)));
        }
        await (stores.wallets as unknown as { close(): Promise<void> }).close();
      }
    }
  } finally {
    await pool.query(`DROP SCHEMA ${quoteIdent(schema)} CASCADE`).catch(() => undefined);
    await pool.end();
  }
  const notes = [
    `stores-size bench: PostgreSQL, ${ORGS} organisations, every table filled to ${sizes.map((s) => s.toLocaleString('en')).join(' / ')} rows ` +
      `(fill time ${fillSeconds.join(', ')}); p50 and p95 in ms of ${ITERATIONS} calls each, for one organisation ` +
      `(1/${ORGS} of the rows); "before" = without migration 029's indexes, same run. Load average ` +
      `${os
        .loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')} at the end.`,
    ['rows  pass    operation                            p50    p95', ...table].join('\n'),
  ];
  // The plans are long: printed (stderr) for the reader of this run, not kept in the results file and the doc.
  if (plans.length > 0) console.error(plans.join('\n'));
  return { notes, figures };
}
