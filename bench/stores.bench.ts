/**
 * Store figures for the shared backends: p50 of an auth lookup, a wallet reserve + debit (hold, then settle), a prediction insert
 * and a prediction get — on PostgreSQL against SQLite (both at 1,000 rows), and at 100,000 rows against 1,000 on
 * each (flat is the goal: every read is an index lookup). The stores are the app's own, built by the backend seam;
 * rows are seeded with bulk SQL. PostgreSQL runs when PRISM_BENCH_DATABASE_URL (or PRISM_TEST_DATABASE_URL) is
 * set, in a schema of its own dropped afterwards.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { postgresStores } from '../src/backend/postgres/records';
import { sqliteStores } from '../src/backend/sqlite/records';
import { defaultPredictionRequest, EMPTY_USAGE, type Prediction } from '../src/domain/prediction';
import { createPool, migratePostgres, quoteIdent } from '../src/backend/postgres/database';
import { openDatabase, type SqliteDatabase } from '../src/backend/sqlite/database';
import type { Stores } from '../src/stores/types';
import type { BenchCase } from './harness';

const SMALL = 1_000;
const LARGE = 100_000;

interface Subject {
  label: string;
  stores: Stores;
  orgId: string;
  keyHashes: string[];
  predictionIds: string[];
  close(): Promise<void>;
}

function prediction(orgId: string): Prediction {
  return {
    id: randomUUID(),
    orgId,
    kind: 'document',
    model: 'prism-1',
    domain: 'document.invoice',
    status: 'completed',
    request: defaultPredictionRequest(),
    inputs: [],
    response: { invoice_id: 'B-1', total: 12.5 },
    usage: EMPTY_USAGE,
    errorMessage: null,
    callbackUrl: null,
    attempts: 1,
    createdAt: new Date(),
    completedAt: new Date(),
  };
}

/** An organisation with a user, a funded wallet, and `rows` keys and predictions (bulk SQL; ids returned). */
async function seed(stores: Stores, bulk: (sql: string, params: unknown[]) => Promise<void>, rows: number) {
  const org = await stores.accounts.createOrg({
    name: `bench-${randomBytes(4).toString('hex')}`,
    tier: 'pro',
    kind: 'standard',
  });
  const user = await stores.accounts.createUser({ orgId: org.id, name: 'bench', isSuperuser: true });
  await stores.wallets.credit(org.id, 1e12, 'bench');
  const tag = randomBytes(4).toString('hex');
  await bulk(
    `INSERT INTO api_keys (id, org_id, user_id, name, key_hash, prefix, created_at)
     SELECT 'k' || n || '-' || ?, ?, ?, 'k', 'hash-' || ? || '-' || n, 'p', ? FROM series(?) AS n`,
    [tag, org.id, user.id, tag, new Date().toISOString(), rows],
  );
  await bulk(
    `INSERT INTO predictions (id, org_id, kind, model, domain, status, request_json, inputs_json, response_json,
                              usage_json, attempts, created_at, updated_at)
     SELECT 'p' || n || '-' || ?, ?, 'document', 'prism-1', 'document.invoice', 'completed', ?, '[]', ?, ?, 1, ?, ?
       FROM series(?) AS n`,
    [
      tag,
      org.id,
      JSON.stringify(defaultPredictionRequest()),
      JSON.stringify({ invoice_id: 'B-1' }),
      JSON.stringify(EMPTY_USAGE),
      new Date().toISOString(),
      new Date().toISOString(),
      rows,
    ],
  );
  /** 200 rows spread over the whole table (a stride prime to its size). */
  const spread = (stride: number): number[] => Array.from({ length: 200 }, (_, i) => 1 + ((i * stride) % rows));
  return {
    orgId: org.id,
    keyHashes: spread(7919).map((n) => `hash-${tag}-${n}`),
    predictionIds: spread(104_729).map((n) => `p${n}-${tag}`),
  };
}

async function sqliteSubject(rows: number): Promise<Subject> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-bench-stores-'));
  const db: SqliteDatabase = openDatabase(path.join(dir, 'prism.db'));
  const stores = sqliteStores(db);
  const seeded = await seed(
    stores,
    async (sql, params) => {
      const count = params.at(-1) as number;
      const withSeries = sql.replace(
        'FROM series(?) AS n',
        'FROM (WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ?) SELECT n FROM s)',
      );
      db.prepare(withSeries).run(...params.slice(0, -1), count);
    },
    rows,
  );
  return {
    label: `sqlite ${rows}`,
    stores,
    ...seeded,
    async close() {
      (stores.wallets as unknown as { flush(): void }).flush();
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresSubject(url: string, rows: number): Promise<Subject> {
  const schema = `prism_bench_${randomBytes(6).toString('hex')}`;
  const pool = createPool({ url, schema, max: 4 });
  await migratePostgres(pool, schema);
  const stores = postgresStores(pool, schema);
  const seeded = await seed(
    stores,
    async (sql, params) => {
      let n = 0;
      const numbered = sql
        .replace('FROM series(?) AS n', 'FROM generate_series(1, ?::int) AS n')
        .replace(/\?/g, () => `$${(n += 1)}`);
      await pool.query(numbered, params);
    },
    rows,
  );
  await pool.query('ANALYZE');
  return {
    label: `postgres ${rows}`,
    stores,
    ...seeded,
    async close() {
      await pool.query(`DROP SCHEMA ${quoteIdent(schema)} CASCADE`);
      await pool.end();
    },
  };
}

/** The four operations of one subject, each cycling through its seeded ids. */
function operations(s: Subject) {
  let k = 0;
  let p = 0;
  return {
    'auth lookup': async () => {
      k = (k + 1) % s.keyHashes.length;
      if (!(await s.stores.accounts.findKeyOwner(s.keyHashes[k] as string))) throw new Error('key not found');
    },
    'wallet reserve + debit': async () => {
      const hold = await s.stores.wallets.hold(s.orgId, 5_000, 60_000);
      if (hold === null) throw new Error('hold refused');
      await s.stores.wallets.settle(hold, s.orgId, 1_000, 'bench');
    },
    'prediction insert': async () => {
      await s.stores.predictions.insert(prediction(s.orgId), []);
    },
    'prediction get': async () => {
      p = (p + 1) % s.predictionIds.length;
      if (!(await s.stores.predictions.get(s.orgId, s.predictionIds[p] as string))) throw new Error('missing');
    },
  };
}

function compare(name: string, baseline: Subject, subject: Subject): BenchCase[] {
  const a = operations(baseline);
  const b = operations(subject);
  return (Object.keys(a) as (keyof typeof a)[]).map((op) => ({
    name: `stores: ${op}, ${name}`,
    baseline: { name: baseline.label, run: a[op] },
    subject: { name: subject.label, run: b[op] },
    iterations: 300,
    warmup: 20,
  }));
}

export async function storesBenchmarks(): Promise<{
  cases: BenchCase[];
  notes: () => Promise<string[]>;
  close: () => Promise<void>;
}> {
  const url = process.env.PRISM_BENCH_DATABASE_URL || process.env.PRISM_TEST_DATABASE_URL;
  const subjects: Subject[] = [];
  const open = async (make: Promise<Subject>): Promise<Subject> => {
    const s = await make;
    subjects.push(s);
    return s;
  };
  const sqliteSmall = await open(sqliteSubject(SMALL));
  const sqliteLarge = await open(sqliteSubject(LARGE));
  const cases = [...compare('sqlite 100,000 rows vs 1,000', sqliteSmall, sqliteLarge)];
  const notes = [
    'stores bench: the machine is shared (2 cores, other work running): read the ratios, not the absolute times. ' +
      'SQLite answers repeated key lookups from memory (exact cache, see accounts.store.ts) and writes debits ' +
      'behind; PostgreSQL does every step as a round trip, as several replicas need.',
  ];
  if (url) {
    const pgSmall = await open(postgresSubject(url, SMALL));
    const pgLarge = await open(postgresSubject(url, LARGE));
    cases.push(...compare('postgres vs sqlite, 1,000 rows', sqliteSmall, pgSmall));
    cases.push(...compare('postgres 100,000 rows vs 1,000', pgSmall, pgLarge));
  } else {
    notes.push('stores bench: PostgreSQL skipped; set PRISM_BENCH_DATABASE_URL=postgres://… to compare it.');
  }
  return {
    cases,
    notes: async () => notes,
    async close() {
      for (const s of subjects) await s.close();
    },
  };
}
