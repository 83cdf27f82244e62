/**
 * The store backends every conformance suite runs against: SQLite on a temporary file, and PostgreSQL in a fresh
 * schema (dropped after) when PRISM_TEST_DATABASE_URL is set.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { postgresStores } from '../../src/backend/postgres/records';
import { sqliteStores } from '../../src/backend/sqlite/records';
import { createPool, migratePostgres } from '../../src/backend/postgres/database';
import type { PostgresWalletStore } from '../../src/backend/postgres/wallets.store';
import { openDatabase } from '../../src/backend/sqlite/database';
import type { Stores } from '../../src/stores/types';
import { dropTestSchema, TEST_DATABASE_URL, testSchemaName } from '../helpers/pg-schema';

export interface OpenStores {
  stores: Stores;
  close: () => Promise<void>;
}

export async function openSqliteStores(): Promise<OpenStores> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-stores-'));
  const db = openDatabase(path.join(dir, 'prism.db'));
  return {
    // Debits written through, as the other dialect does: the suites read balances from other connections.
    stores: sqliteStores(db, { walletFlushMs: 0 }),
    async close() {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function openPostgresStores(): Promise<OpenStores> {
  if (!TEST_DATABASE_URL) throw new Error('PRISM_TEST_DATABASE_URL is not set');
  const schema = testSchemaName();
  const pool = createPool({ url: TEST_DATABASE_URL, schema, max: 8 });
  await migratePostgres(pool, schema);
  const stores = postgresStores(pool, schema);
  return {
    stores,
    async close() {
      // Queued debits written and allowances given back before the pool goes, as the app's closers do.
      await (stores.wallets as PostgresWalletStore).close();
      await pool.end();
      await dropTestSchema(schema);
    },
  };
}
