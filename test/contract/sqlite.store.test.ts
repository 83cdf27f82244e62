/**
 * Runs the store conformance suite against SQLite on a real temporary file.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSqliteAccountStore } from '../../src/stores/sqlite/accounts.store';
import { migrate, openDatabase } from '../../src/stores/sqlite/database';
import { createSqliteFileStore } from '../../src/stores/sqlite/files.store';
import { createSqliteWalletStore } from '../../src/stores/sqlite/wallets.store';
import { describeStoreConformance } from './store.conformance';

describeStoreConformance('sqlite', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-store-'));
  const db = openDatabase(path.join(dir, 'prism.db'));
  return {
    accounts: createSqliteAccountStore(db),
    wallets: createSqliteWalletStore(db),
    files: createSqliteFileStore(db),
    async close() {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('sqlite migrations', () => {
  it('apply once, in order, and are recorded', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-migrate-'));
    try {
      const db = openDatabase(path.join(dir, 'prism.db'));
      expect(migrate(db)).toEqual([]);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
      const versions = db.prepare('SELECT version FROM schema_migrations ORDER BY version').all();
      expect(versions).toEqual([{ version: 1 }, { version: 2 }]);
      db.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
