/**
 * Ledger retention (PRISM_LEDGER_RETENTION_DAYS, src/backend/ledger-retention.ts): per-call spend and wallet ledger
 * rows older than the retention are rolled up into per-day rows, and the operator sees the same figures: the spend
 * reports by key, model and day (whole-day ranges too), each key's spend, the wallet balances and each
 * organisation's ledger total. The per-call rows go to the archive tables; recent rows stay as they are; a second
 * run adds a late row of a rolled-up day to that day's row. On whatever backend PRISM_TEST_BACKEND names.
 */
import { call, startTestApp, type TestApp } from '../helpers/test-app';
import { rawSql, type RawSql } from '../helpers/raw-sql';

const DAY = 86_400_000;
const now = Date.now();
/** An ISO time `days` ago at `hour` UTC. */
const daysAgo = (days: number, hour = 10, minute = 0): string => {
  const d = new Date(now - days * DAY);
  d.setUTCHours(hour, minute, 0, 0);
  return d.toISOString();
};

interface Report {
  rows: { group: string; calls: number; cost_usd: number }[];
  total_usd: number;
}

describe('ledger retention', () => {
  let app: TestApp;
  let sql: RawSql;
  const keys: { id: string; org: string }[] = [];

  const admin = async <T>(path: string): Promise<T> => {
    const res = await call(`${app.url}/v1/admin${path}`, { key: app.ownerKey });
    expect(res.status).toBe(200);
    return (await res.json()) as T;
  };

  /** Everything the operator can read that the ledgers feed. */
  const figures = async (): Promise<Record<string, unknown>> => {
    const out: Record<string, unknown> = {};
    for (const groupBy of ['key', 'model', 'day']) out[groupBy] = await admin<Report>(`/spend?group_by=${groupBy}`);
    out.window = await admin<Report>(
      `/spend?group_by=model&from=${daysAgo(50).slice(0, 10)}&to=${daysAgo(41).slice(0, 10)}`,
    );
    for (const k of keys) out[`key ${k.id}`] = (await admin<{ spend_usd: number }>(`/keys/${k.id}`)).spend_usd;
    for (const org of new Set(keys.map((k) => k.org))) {
      out[`balance ${org}`] = await app.container.stores.wallets.balance(org);
      const [ledger] = await sql.rows<{ total: number | string }>(
        'SELECT SUM(amount_micros) AS total FROM wallet_entries WHERE org_id = ?',
        [org],
      );
      out[`ledger ${org}`] = Number(ledger?.total ?? 0);
    }
    return out;
  };

  beforeAll(async () => {
    app = await startTestApp({ PRISM_LEDGER_RETENTION_DAYS: '30' });
    sql = rawSql(app.container);
    for (const [org, n] of [
      ['retained-a', 2],
      ['retained-b', 1],
    ] as const) {
      for (let i = 0; i < n; i += 1) {
        const created = await app.container.services.accounts.createKey({ org: String(org), tier: 'pro' });
        keys.push({ id: created.keyId, org: created.orgId });
      }
      await app.container.stores.wallets.credit(keys.at(-1)!.org, 50_000_000, 'top up');
    }
    // 40 to 60 days ago (past the retention) and 3 days ago (kept): calls of every key on two models, some in the
    // same day, plus a call with no key (a guest's).
    let n = 0;
    for (const days of [60, 59, 45, 45, 41, 3]) {
      for (const [i, k] of keys.entries()) {
        for (const model of ['m-small', 'm-large']) {
          n += 1;
          const at = daysAgo(days, 8 + (n % 12), n % 60);
          await sql.run(
            'INSERT INTO key_spend (id, key_id, org_id, model, micros, created_at) VALUES (?, ?, ?, ?, ?, ?)',
            [`spend-${n}`, k.id, k.org, model, 1000 * (i + 1) + n, at],
          );
          await sql.run(
            `INSERT INTO wallet_entries (org_id, amount_micros, balance_after_micros, reason, created_at)
             VALUES (?, ?, ?, ?, ?)`,
            [k.org, -(1000 * (i + 1) + n), 40_000_000 - n, `chat.completions ${model}`, at],
          );
        }
      }
      await sql.run('INSERT INTO key_spend (id, key_id, org_id, model, micros, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
        `spend-guest-${days}-${n}`,
        null,
        keys[0]!.org,
        'm-small',
        777,
        daysAgo(days, 23, 59),
      ]);
    }
  });
  afterAll(() => app.close());

  it('rolls old rows up into per-day rows with the same reports, key spend, balances and ledger totals', async () => {
    const before = await figures();
    const spendRows = await sql.count('key_spend');
    const walletRows = await sql.count('wallet_entries');

    const result = await app.container.ledgerRetention.runOnce();
    expect(result).not.toBeNull();
    // 5 old days x 3 keys x 2 models, plus 5 guest calls; the same per-call wallet rows (the guest's have none).
    expect(result!.spendRowsRolledUp).toBe(35);
    expect(result!.walletRowsRolledUp).toBe(30);
    expect(await figures()).toEqual(before);

    // Per day (4 distinct old days), key and model: 4 x 3 x 2 day rows plus a guest row per day; recent rows kept.
    expect(await sql.count('key_spend')).toBe(spendRows - 35 + 24 + 4);
    expect(await sql.count('wallet_entries')).toBeLessThan(walletRows);
    expect(await sql.count('key_spend_archive')).toBe(35);
    expect(await sql.count('wallet_entries_archive')).toBe(30);
    const recent = await sql.rows<{ n: number | string }>(
      'SELECT COUNT(*) AS n FROM key_spend WHERE rollup_key IS NULL',
    );
    expect(Number(recent[0]?.n)).toBe(7);

    // Nothing more to do; then a late row of a rolled-up day joins that day's row.
    expect(await app.container.ledgerRetention.runOnce()).toMatchObject({
      spendRowsRolledUp: 0,
      walletRowsRolledUp: 0,
    });
    const k = keys[0]!;
    await sql.run('INSERT INTO key_spend (id, key_id, org_id, model, micros, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
      'spend-late',
      k.id,
      k.org,
      'm-small',
      5000,
      daysAgo(45, 12),
    ]);
    const withLate = await figures();
    expect(await app.container.ledgerRetention.runOnce()).toMatchObject({ spendRowsRolledUp: 1 });
    expect(await figures()).toEqual(withLate);
    const byDay = await admin<Report>('/spend?group_by=day');
    expect(byDay.rows.find((r) => r.group === daysAgo(45).slice(0, 10))?.calls).toBe(2 * 3 * 2 + 2 + 1);
  });
});
