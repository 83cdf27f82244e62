/**
 * What only the PostgreSQL wallet store's allowances promise (the WalletStore behaviour itself is in the records
 * conformance suite): two processes (two stores on two pools) never hold more than the balance together, an
 * allowance of a process that died lapses and goes to the next process that lacks money, and settles queued when a
 * store closes are all written, each ledger row with the balance it left, with nothing left held.
 */
import type pg from 'pg';
import { createPool, migratePostgres } from '../../src/backend/postgres/database';
import { createPostgresWalletStore, type PostgresWalletStore } from '../../src/backend/postgres/wallets.store';
import { describePostgres, dropTestSchema, TEST_DATABASE_URL, testSchemaName } from '../helpers/pg-schema';

describePostgres('postgres wallet allowances', () => {
  let schema: string;
  let pools: pg.Pool[];
  let stores: PostgresWalletStore[];
  const org = 'org_wallet';

  const pool = (): pg.Pool => {
    const p = createPool({ url: TEST_DATABASE_URL as string, schema, max: 4 });
    pools.push(p);
    return p;
  };
  const store = (p: pg.Pool, options: Parameters<typeof createPostgresWalletStore>[1] = {}): PostgresWalletStore => {
    const s = createPostgresWalletStore(p, options);
    stores.push(s);
    return s;
  };

  beforeEach(async () => {
    schema = testSchemaName();
    pools = [];
    stores = [];
    const admin = pool();
    await migratePostgres(admin, schema);
    await admin.query(`INSERT INTO organisations (id, name, tier, created_at) VALUES ($1, $1, 'free', now())`, [org]);
  });

  afterEach(async () => {
    await Promise.all(stores.map((s) => s.close().catch(() => undefined)));
    await Promise.all(pools.filter((p) => !p.ended).map((p) => p.end()));
    await dropTestSchema(schema);
  });

  const row = async (): Promise<{ balance: number; held: number; slices: number }> => {
    const admin = pools[0] as pg.Pool;
    const { rows } = await admin.query<{ balance: number; held: number; slices: number }>(
      `SELECT balance_micros AS balance, held_micros AS held,
              (SELECT count(*)::int FROM wallet_holds WHERE org_id = $1) AS slices
         FROM wallets WHERE org_id = $1`,
      [org],
    );
    return rows[0] as { balance: number; held: number; slices: number };
  };

  it('shares a nearly empty wallet call by call between two processes', async () => {
    const [a, b] = [store(pool()), store(pool())] as [PostgresWalletStore, PostgresWalletStore];
    await a.credit(org, 10_000, 'top up');
    const holds = await Promise.all(
      Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).hold(org, 1_000, 60_000)),
    );
    expect(holds.filter((h) => h !== null)).toHaveLength(10);
    expect((await row()).held).toBe(10_000);
    expect(await a.hold(org, 1, 60_000)).toBeNull();
    expect(await b.hold(org, 1, 60_000)).toBeNull();
  });

  it("lets a dead process's allowance lapse, then gives it to the next process that lacks money", async () => {
    const deadPool = pool();
    const dead = store(deadPool, { sliceTtlMs: 2_000, idleMs: 60_000 });
    const live = store(pool());
    await live.credit(org, 100_000, 'top up');
    expect(await dead.hold(org, 1_000, 60_000)).not.toBeNull();
    // A plentiful wallet: the process took a slice of sixteen calls, not only this call's 1,000.
    expect(await row()).toEqual({ balance: 100_000, held: 16_000, slices: 1 });
    // Another process counts that slice as held.
    expect(await live.held(org)).toBe(16_000);

    await deadPool.end(); // the process dies: its allowance is neither refreshed nor given back
    expect(await live.hold(org, 90_000, 60_000)).toBeNull();
    let hold: string | null = null;
    for (let i = 0; i < 100 && hold === null; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      hold = await live.hold(org, 90_000, 60_000);
    }
    expect(hold).not.toBeNull();
    expect(await row()).toEqual({ balance: 100_000, held: 90_000, slices: 1 });
    expect(await live.settle(hold as string, org, 40_000, 'long call')).toBe(60_000);
    expect(await live.held(org)).toBe(0);
  });

  it('writes every settle queued when the store closes, each ledger row with the balance it left', async () => {
    const s = store(pool(), { idleMs: 60_000 });
    await s.credit(org, 1_000_000, 'top up');
    const holds = await Promise.all(Array.from({ length: 50 }, () => s.hold(org, 1_000, 60_000)));
    expect(holds.every((h) => h !== null)).toBe(true);
    const settles = holds.map((h, i) => s.settle(h as string, org, 100 + i, `call ${i}`));
    await s.close();
    const balances = await Promise.all(settles);
    const spent = 50 * 100 + (49 * 50) / 2;

    expect(await row()).toEqual({ balance: 1_000_000 - spent, held: 0, slices: 0 });
    const { rows } = await (pools[0] as pg.Pool).query<{ amount: number; after: number }>(
      `SELECT amount_micros AS amount, balance_after_micros AS after FROM wallet_entries
        WHERE org_id = $1 AND reason LIKE 'call %' ORDER BY id`,
      [org],
    );
    expect(rows).toHaveLength(50);
    // The ledger reads as the debits applied one by one, and each settle answered the balance its row records.
    let balance = 1_000_000;
    for (const entry of rows) {
      balance += entry.amount;
      expect(entry.after).toBe(balance);
    }
    expect(balances.sort((x, y) => x - y)).toEqual(rows.map((r) => r.after).sort((x, y) => x - y));
  });
});
