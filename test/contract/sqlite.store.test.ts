/**
 * Runs the store conformance suites against SQLite on a real temporary file (postgres.store.test.ts runs the same
 * suites against PostgreSQL), plus what only the SQLite stores promise (key memory, debits written behind).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSqliteAccountStore } from '../../src/backend/sqlite/accounts.store';
import { migrate, openDatabase } from '../../src/backend/sqlite/database';
import { createSqliteWalletStore } from '../../src/backend/sqlite/wallets.store';
import { describeRecordsConformance } from './records.conformance';
import { openSqliteStores } from './store-backends';
import { describeStoreConformance } from './store.conformance';

describeStoreConformance('sqlite', async () => {
  const { stores, close } = await openSqliteStores();
  return { ...stores, close };
});
describeRecordsConformance('sqlite', openSqliteStores);

describe('sqlite migrations', () => {
  it('apply once, in order, and are recorded', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-migrate-'));
    try {
      const db = openDatabase(path.join(dir, 'prism.db'));
      expect(migrate(db)).toEqual([]);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
      const versions = db.prepare('SELECT version FROM schema_migrations ORDER BY version').all();
      const files = fs
        .readdirSync(path.join(__dirname, '..', '..', 'src', 'backend', 'sqlite', 'migrations'))
        .map((name) => Number(/^(\d+)_.*\.sql$/.exec(name)?.[1]))
        .filter(Number.isInteger)
        .sort((a, b) => a - b);
      expect(files.slice(0, 2)).toEqual([1, 2]);
      expect(versions).toEqual(files.map((version) => ({ version })));
      db.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * Other connections' commits are looked for once per event-loop turn (other-commits.ts); a request arriving from
 * the network always starts a new turn, so this stands for "the next request".
 */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('sqlite key lookups', () => {
  it('see keys revoked and tiers changed through another connection from the next turn (the CLI beside a server)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-keys-'));
    const server = openDatabase(path.join(dir, 'prism.db'));
    const cli = openDatabase(path.join(dir, 'prism.db'));
    try {
      const serverAccounts = createSqliteAccountStore(server);
      const cliAccounts = createSqliteAccountStore(cli);
      const org = await serverAccounts.createOrg({ name: 'acme', tier: 'free', kind: 'standard' });
      const user = await serverAccounts.createUser({ orgId: org.id, name: 'u', isSuperuser: false });
      const key = await serverAccounts.createKey({
        orgId: org.id,
        userId: user.id,
        name: 'k',
        keyHash: 'h',
        prefix: 'p',
      });
      expect(await serverAccounts.findKeyOwner('h')).toMatchObject({ org: { tier: 'free' } });
      // A second look is served from memory...
      expect(await serverAccounts.findKeyOwner('h')).toBe(await serverAccounts.findKeyOwner('h'));
      // ...until another connection commits.
      await cliAccounts.setOrgTier(org.id, 'pro');
      await nextTurn();
      expect(await serverAccounts.findKeyOwner('h')).toMatchObject({ org: { tier: 'pro' } });
      await cliAccounts.revokeKey(key.id);
      await nextTurn();
      expect(await serverAccounts.findKeyOwner('h')).toBeNull();
    } finally {
      cli.close();
      server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('sqlite wallet debits', () => {
  let dir: string;
  let server: ReturnType<typeof openDatabase>;
  let cli: ReturnType<typeof openDatabase>;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-wallets-'));
    server = openDatabase(path.join(dir, 'prism.db'));
    cli = openDatabase(path.join(dir, 'prism.db'));
  });
  afterEach(() => {
    cli.close();
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const ledger = (db: ReturnType<typeof openDatabase>) =>
    db
      .prepare('SELECT amount_micros AS amount, balance_after_micros AS after FROM wallet_entries ORDER BY id')
      .all() as Array<{ amount: number; after: number }>;

  it('are seen by the next balance at once and written behind, in order, with the right running balance', async () => {
    const wallets = createSqliteWalletStore(server, { flushMs: 60_000 });
    const org = await createSqliteAccountStore(server).createOrg({ name: 'acme', tier: 'free', kind: 'standard' });
    await wallets.credit(org.id, 10_000, 'top up');
    expect(await wallets.credit(org.id, -1_000, 'call 1')).toBe(9_000);
    expect(await wallets.credit(org.id, -2_500, 'call 2')).toBe(6_500);
    expect(await wallets.balance(org.id)).toBe(6_500);
    // Not written yet: another connection still sees the balance before the debits.
    expect(await createSqliteWalletStore(cli).balance(org.id)).toBe(10_000);
    wallets.flush();
    expect(await createSqliteWalletStore(cli).balance(org.id)).toBe(6_500);
    expect(ledger(cli)).toEqual([
      { amount: 10_000, after: 10_000 },
      { amount: -1_000, after: 9_000 },
      { amount: -2_500, after: 6_500 },
    ]);
  });

  it("write one batch of interleaved debits of several organisations with each one's running balance", async () => {
    const wallets = createSqliteWalletStore(server, { flushMs: 60_000 });
    const accounts = createSqliteAccountStore(server);
    const a = await accounts.createOrg({ name: 'a', tier: 'free', kind: 'standard' });
    const b = await accounts.createOrg({ name: 'b', tier: 'free', kind: 'standard' });
    await wallets.credit(a.id, 1_000, 'top up');
    await wallets.credit(a.id, -100, 'a1');
    await wallets.credit(b.id, -7, 'b1');
    await wallets.credit(a.id, -200, 'a2');
    // Another connection credits b while its debit is queued: the batch builds on that balance.
    await createSqliteWalletStore(cli).credit(b.id, 50, 'operator');
    await wallets.credit(b.id, -3, 'b2');
    wallets.flush();
    const rows = (orgId: string) =>
      cli
        .prepare(
          'SELECT reason, amount_micros AS amount, balance_after_micros AS after FROM wallet_entries WHERE org_id = ? ORDER BY id',
        )
        .all(orgId);
    expect(rows(a.id)).toEqual([
      { reason: 'top up', amount: 1_000, after: 1_000 },
      { reason: 'a1', amount: -100, after: 900 },
      { reason: 'a2', amount: -200, after: 700 },
    ]);
    expect(rows(b.id)).toEqual([
      { reason: 'operator', amount: 50, after: 50 },
      { reason: 'b1', amount: -7, after: 43 },
      { reason: 'b2', amount: -3, after: 40 },
    ]);
    expect(await createSqliteWalletStore(cli).balance(a.id)).toBe(700);
    expect(await createSqliteWalletStore(cli).balance(b.id)).toBe(40);
  });

  it('write queued debits before a credit, and see credits made by another connection', async () => {
    const wallets = createSqliteWalletStore(server, { flushMs: 60_000 });
    const org = await createSqliteAccountStore(server).createOrg({ name: 'acme', tier: 'free', kind: 'standard' });
    await wallets.credit(org.id, -1_000, 'call');
    expect(await wallets.credit(org.id, 5_000, 'top up')).toBe(4_000);
    expect(ledger(cli)).toEqual([
      { amount: -1_000, after: -1_000 },
      { amount: 5_000, after: 4_000 },
    ]);
    await wallets.credit(org.id, -500, 'call');
    // The CLI adds credits while debits are queued: the next balance has both.
    await createSqliteWalletStore(cli).credit(org.id, 2_000, 'operator');
    await nextTurn();
    expect(await wallets.balance(org.id)).toBe(5_500);
    wallets.flush();
    expect(await createSqliteWalletStore(cli).balance(org.id)).toBe(5_500);
  });

  it('are written on their own within flushMs', async () => {
    const wallets = createSqliteWalletStore(server, { flushMs: 5 });
    const org = await createSqliteAccountStore(server).createOrg({ name: 'acme', tier: 'free', kind: 'standard' });
    await wallets.credit(org.id, -1_000, 'call');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(ledger(cli)).toEqual([{ amount: -1_000, after: -1_000 }]);
  });
});
