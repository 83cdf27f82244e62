/**
 * A key's budget over time (src/services/admin/key-policies.ts), on a real SQLite file with a clock the test moves:
 * a daily budget starts again at 00:00 UTC and a monthly one on the 1st, a `none` budget never does; a hold nobody
 * settles lapses after its time to live and frees the budget; a settled hold counts its real cost, not what it held.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createAccountsService } from '../../src/services/accounts.service';
import { createAdminSql } from '../../src/backend/admin-sql';
import { createKeyPolicies, KeyBudgetExceededError, periodStartOf } from '../../src/services/admin/key-policies';
import { sqliteStores } from '../../src/backend/sqlite/records';
import { openDatabase, type SqliteDatabase } from '../../src/backend/sqlite/database';

describe('key budgets over time', () => {
  let dir: string;
  let db: SqliteDatabase;
  let clock: Date;
  let policies: ReturnType<typeof createKeyPolicies>;
  let accounts: ReturnType<typeof createAccountsService>;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-admin-budget-'));
    db = openDatabase(path.join(dir, 'prism.db'));
    const stores = sqliteStores(db);
    accounts = createAccountsService({
      accounts: stores.accounts,
      wallets: stores.wallets,
      writeOwnerKey: async () => undefined,
    });
    clock = new Date('2026-03-31T23:00:00Z');
    policies = createKeyPolicies(createAdminSql({ dialect: 'sqlite', db }), () => clock);
  });
  afterAll(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const keyWith = async (budgetMicros: number, budgetPeriod: 'daily' | 'monthly' | 'none'): Promise<string> => {
    const { keyId } = await accounts.createKey({ org: 'periods' });
    await policies.set(keyId, { budgetMicros, budgetPeriod });
    return keyId;
  };
  const spend = async (keyId: string, micros: number): Promise<void> => {
    const hold = await policies.holdBudget(keyId, micros, 60_000);
    await policies.settleBudget(hold!, keyId, micros);
  };

  it('computes the start of each period in UTC', () => {
    const at = new Date('2026-07-15T13:45:00Z');
    expect(periodStartOf('daily', at).toISOString()).toBe('2026-07-15T00:00:00.000Z');
    expect(periodStartOf('monthly', at).toISOString()).toBe('2026-07-01T00:00:00.000Z');
    expect(periodStartOf('none', at).getTime()).toBe(0);
  });

  it('starts a daily budget again at midnight, a monthly one on the 1st, and never a budget without a period', async () => {
    clock = new Date('2026-03-31T23:00:00Z');
    const daily = await keyWith(1000, 'daily');
    const monthly = await keyWith(1000, 'monthly');
    const forever = await keyWith(1000, 'none');
    for (const key of [daily, monthly, forever]) {
      await spend(key, 1000);
      await expect(policies.holdBudget(key, 1, 60_000)).rejects.toBeInstanceOf(KeyBudgetExceededError);
    }
    clock = new Date('2026-04-01T00:30:00Z'); // a new day and a new month
    for (const key of [daily, monthly]) {
      expect(await policies.holdBudget(key, 1000, 60_000)).not.toBeNull();
      expect((await policies.get(key))!.spentMicros).toBe(0);
    }
    await expect(policies.holdBudget(forever, 1, 60_000)).rejects.toBeInstanceOf(KeyBudgetExceededError);
  });

  it('lets a hold nobody settles lapse, and counts a settled hold at its real cost', async () => {
    clock = new Date('2026-05-10T10:00:00Z');
    const key = await keyWith(1000, 'none');
    expect(await policies.holdBudget(key, 800, 60_000)).not.toBeNull();
    await expect(policies.holdBudget(key, 300, 60_000)).rejects.toBeInstanceOf(KeyBudgetExceededError);
    clock = new Date('2026-05-10T10:01:01Z'); // the first hold has lapsed
    const hold = await policies.holdBudget(key, 800, 60_000);
    await policies.settleBudget(hold!, key, 150);
    expect((await policies.get(key))!.spentMicros).toBe(150);
    expect(await policies.held(key)).toBe(0);
    expect(await policies.holdBudget(key, 850, 60_000)).not.toBeNull();
  });

  it('answers no hold for a key without a budget', async () => {
    const { keyId } = await accounts.createKey({ org: 'periods' });
    expect(await policies.holdBudget(keyId, 10_000_000, 60_000)).toBeNull();
  });
});
