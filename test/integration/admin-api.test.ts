/**
 * Issue 47 item 3: the operator's API (`/v1/admin`, docs/admin.md), over plain HTTP against the real app and a
 * scripted upstream. Cases: a non-admin key (and no key) is refused; a key created with a budget spends through the
 * gateway until its budget refuses it (402 `key_budget_exceeded`, before the upstream is called); an expired key is
 * 401; a model outside a key's allow-list is 403 `model_not_allowed`; revoke is immediate; rotate gives a new
 * working secret and kills the old; the spend report's total equals the wallet debits; the CSV parses; the audit
 * log names who did what; organisations and credits.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import type { ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, databaseEnvFor, type TestApp } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

interface KeyView {
  id: string;
  key?: string;
  org: string;
  prefix: string;
  revoked_at: string | null;
  expires_at: string | null;
  budget_usd: number | null;
  budget_spent_usd: number;
  spend_usd: number;
  allowed_models: string[] | null;
}

describe('the operator API (/v1/admin)', () => {
  let lab: UpstreamApp;
  let upstream: ScriptedUpstream;
  let app: TestApp;
  let admin: string;

  beforeAll(async () => {
    // $0.10 per completion token, prompts free: a call with `max_tokens: 1` can cost at most $0.10.
    lab = await startUpstreamApp(
      [
        {
          id: 'pricey',
          upstreamModel: 'pricey-up',
          parameters: ['max_tokens'],
          pricing: { prompt: 0, completion: 100000 },
        },
        {
          id: 'other',
          upstreamModel: 'other-up',
          parameters: ['max_tokens'],
          pricing: { prompt: 0, completion: 100000 },
        },
      ],
      { apiKeyEnv: 'LAB_KEY', env: { LAB_KEY: 'sk-lab', PRISM_RATE_LIMIT_PER_MINUTE: '1000' } },
    );
    ({ app, upstream } = lab);
    admin = app.ownerKey;
    for (const model of ['pricey-up', 'other-up']) {
      upstream.forModel(model, { kind: 'reply', content: 'one', usage: { prompt_tokens: 3, completion_tokens: 1 } });
    }
  });
  afterAll(() => lab.close());

  const adminCall = (
    path: string,
    init: { method?: string; json?: unknown; key?: string; headers?: Record<string, string> } = {},
  ) => call(`${app.url}/v1/admin${path}`, { key: admin, ...init });
  const chat = (key: string, model = 'pricey') =>
    call(`${app.url}/v1/compat/chat/completions`, {
      key,
      json: { model, max_tokens: 1, messages: [{ role: 'user', content: 'hi' }] },
    });
  const createKey = async (body: Record<string, unknown>): Promise<KeyView & { key: string }> => {
    const res = await adminCall('/keys', { json: body });
    expect(res.status).toBe(201);
    return (await res.json()) as KeyView & { key: string };
  };
  const balanceUsd = async (org: string): Promise<number> => {
    const res = await adminCall('/organisations');
    const orgs = (await res.json()) as { data: { name: string; balance_usd: number }[] };
    return orgs.data.find((o) => o.name === org)!.balance_usd;
  };

  it('refuses callers that are not a superuser key of the owner organisation', async () => {
    const plain = await app.createKey('someone', 'pro');
    const res = await adminCall('/keys', { key: plain });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({
      detail: { error: { code: 'permission_denied', type: 'permission_error' } },
    });
    // A superuser of another organisation administers nothing.
    const otherSuper = (await app.container.services.accounts.createKey({ org: 'elsewhere', superuser: true })).key;
    expect((await adminCall('/audit', { key: otherSuper })).status).toBe(403);
    expect((await call(`${app.url}/v1/admin/keys`)).status).toBe(401);
    expect((await adminCall('/keys', { key: plain, json: { org: 'x' } })).status).toBe(403);
  });

  it('creates a key with a budget that the gateway spends until it refuses, before calling the upstream', async () => {
    expect((await adminCall('/organisations', { json: { name: 'acme', tier: 'pro' } })).status).toBe(201);
    expect((await adminCall('/organisations', { json: { name: 'acme' } })).status).toBe(409);
    const credited = await adminCall('/organisations/acme/credits', { json: { amount_usd: 10 } });
    expect(await credited.json()).toMatchObject({ balance_usd: 10 });
    const key = await createKey({ org: 'acme', name: 'ci', budget_usd: 0.25, budget_period: 'monthly' });
    expect(key.key).toMatch(/^prism_/);
    expect(key).toMatchObject({ org: 'acme', budget_usd: 0.25, budget_spent_usd: 0 });

    expect((await chat(key.key)).status).toBe(201);
    expect((await chat(key.key)).status).toBe(201);
    const upstreamCalls = upstream.requests.length;
    const refused = await chat(key.key); // $0.20 spent, at most $0.10 more would pass $0.25
    expect(refused.status).toBe(402);
    expect(await refused.json()).toMatchObject({
      detail: { error: { code: 'key_budget_exceeded', type: 'billing_error' } },
    });
    expect(upstream.requests.length).toBe(upstreamCalls);
    expect(await balanceUsd('acme')).toBeCloseTo(9.8, 6);

    const listed = (await (await adminCall('/keys?org=acme')).json()) as { data: KeyView[] };
    const row = listed.data.find((k) => k.id === key.id)!;
    expect(row).toMatchObject({ budget_spent_usd: 0.2, spend_usd: 0.2, revoked_at: null });
    expect(JSON.stringify(listed)).not.toContain(key.key);

    // Raising the budget lets the key spend again.
    const raised = await adminCall(`/keys/${key.id}/budget`, { method: 'PUT', json: { budget_usd: 1 } });
    expect(await raised.json()).toMatchObject({ budget_usd: 1, budget_spent_usd: 0.2 });
    expect((await chat(key.key)).status).toBe(201);
  });

  it('lets exactly the calls a budget covers through when twenty arrive at once', async () => {
    const key = await createKey({ org: 'acme', name: 'burst', budget_usd: 0.5, budget_period: 'daily' });
    const statuses = (await Promise.all(Array.from({ length: 20 }, () => chat(key.key)))).map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 402)).toHaveLength(15);
    const view = (await (await adminCall(`/keys/${key.id}`)).json()) as KeyView;
    expect(view).toMatchObject({ budget_spent_usd: 0.5, spend_usd: 0.5 });
  });

  it("caps an organisation's spend with its own budget, whatever its keys' budgets and wallet allow", async () => {
    expect((await adminCall('/organisations', { json: { name: 'capped' } })).status).toBe(201);
    await adminCall('/organisations/capped/credits', { json: { amount_usd: 10 } });
    const set = await adminCall('/organisations/capped/budget', {
      method: 'PUT',
      json: { budget_usd: 0.15, budget_period: 'daily' },
    });
    expect(await set.json()).toMatchObject({ name: 'capped', budget_usd: 0.15, budget_period: 'daily' });
    const one = await createKey({ org: 'capped' });
    const two = await createKey({ org: 'capped' });
    expect((await chat(one.key)).status).toBe(201);
    const refused = await chat(two.key); // $0.10 spent by the organisation, $0.10 more would pass $0.15
    expect(refused.status).toBe(402);
    expect(await refused.json()).toMatchObject({ detail: { error: { code: 'org_budget_exceeded' } } });
    expect(await balanceUsd('capped')).toBeCloseTo(9.9, 6);
    await adminCall('/organisations/capped/budget', { method: 'PUT', json: { budget_usd: null } });
    expect((await chat(two.key)).status).toBe(201);
  });

  it('refuses an expired key with 401 and a model outside the allow-list with 403', async () => {
    const expired = await createKey({ org: 'acme', expires_at: new Date(Date.now() - 1000).toISOString() });
    const res = await chat(expired.key);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { code: 'invalid_api_key' } });
    const live = await createKey({ org: 'acme', expires_at: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await chat(live.key)).status).toBe(201);

    const limited = await createKey({ org: 'acme', allowed_models: ['other'] });
    const denied = await chat(limited.key, 'pricey');
    expect(denied.status).toBe(403);
    expect(await denied.json()).toMatchObject({ error: { code: 'model_not_allowed', type: 'permission_error' } });
    expect((await chat(limited.key, 'other')).status).toBe(201);

    // Changed afterwards: the allow-list cleared, then the key expired.
    const patch = (json: unknown) => adminCall(`/keys/${limited.id}`, { method: 'PATCH', json });
    expect(await (await patch({ allowed_models: null })).json()).toMatchObject({ allowed_models: null });
    expect((await chat(limited.key, 'pricey')).status).toBe(201);
    await patch({ expires_at: new Date(Date.now() - 1000).toISOString() });
    expect((await chat(limited.key, 'other')).status).toBe(401);
  });

  it('revokes at once and rotates to a new secret with the same policy', async () => {
    const key = await createKey({ org: 'acme', allowed_models: ['pricey'] });
    expect((await chat(key.key)).status).toBe(201);
    expect((await adminCall(`/keys/${key.id}/revoke`, { json: {} })).status).toBe(200);
    expect((await chat(key.key)).status).toBe(401);

    const old = await createKey({ org: 'acme', allowed_models: ['pricey'] });
    const rotated = await adminCall(`/keys/${old.id}/rotate`, { json: {} });
    expect(rotated.status).toBe(201);
    const fresh = (await rotated.json()) as KeyView & { key: string; replaces: string };
    expect(fresh).toMatchObject({ replaces: old.id, allowed_models: ['pricey'], revoked_at: null });
    expect(fresh.key).not.toBe(old.key);
    expect((await chat(old.key)).status).toBe(401);
    expect((await chat(fresh.key)).status).toBe(201);
    expect((await chat(fresh.key, 'other')).status).toBe(403);
    expect((await adminCall(`/keys/${old.id}/rotate`, { json: {} })).status).toBe(409);
  });

  it('reports spend by key, model and day, whose total equals the wallet debits, also as CSV', async () => {
    // Both organisations that spent started with $10 of credit; nothing else paid for a call.
    const spent = 10 - (await balanceUsd('acme')) + (10 - (await balanceUsd('capped')));
    for (const groupBy of ['key', 'model', 'day']) {
      const report = (await (await adminCall(`/spend?group_by=${groupBy}`)).json()) as {
        rows: { group: string; calls: number; cost_usd: number }[];
        total_usd: number;
      };
      expect(report.total_usd).toBeCloseTo(spent, 6);
      expect(report.rows.reduce((s, r) => s + r.cost_usd, 0)).toBeCloseTo(spent, 6);
    }
    const byModel = (await (await adminCall('/spend?group_by=model')).json()) as { rows: { group: string }[] };
    expect(byModel.rows.map((r) => r.group).sort()).toEqual(['other', 'pricey']);

    const csv = await adminCall('/spend?group_by=day', { headers: { accept: 'text/csv' } });
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = (await csv.text())
      .trim()
      .split('\r\n')
      .map((l) => l.split(','));
    expect(lines[0]).toEqual(['day', 'calls', 'cost_usd']);
    expect(lines[1]![0]).toBe(new Date().toISOString().slice(0, 10));
    expect(lines.slice(1).reduce((s, l) => s + Number(l[2]), 0)).toBeCloseTo(spent, 6);
    const viaFormat = await adminCall('/spend?group_by=key&format=csv');
    expect((await viaFormat.text()).split('\r\n')[0]).toBe('key,calls,cost_usd');

    const none = (await (await adminCall('/spend?group_by=key&to=2000-01-01')).json()) as { total_usd: number };
    expect(none.total_usd).toBe(0);
  });

  it('gives the CLI the same keys: a budget and an allow-list set with `prism keys create` hold at the gateway', async () => {
    const bin = path.resolve(__dirname, '..', '..', 'bin', 'prism.js');
    const args = ['keys', 'create', '--org', 'acme', '--name', 'from-cli', '--models', 'pricey', '--budget-usd', '0.1'];
    const result = spawnSync(process.execPath, [bin, ...args], {
      env: { ...process.env, ...databaseEnvFor(app.dataDir), PRISM_DATA_DIR: app.dataDir, PRISM_LOG_LEVEL: 'silent' },
      encoding: 'utf8',
    });
    expect(result.status).toBe(0);
    const secret = result.stdout.trim();
    const keyId = /key_id (\S+)/.exec(result.stderr)![1]!;
    expect(await (await adminCall(`/keys/${keyId}`)).json()).toMatchObject({
      name: 'from-cli',
      allowed_models: ['pricey'],
      budget_usd: 0.1,
    });
    expect((await chat(secret, 'other')).status).toBe(403);
    expect((await chat(secret)).status).toBe(201);
    expect((await chat(secret)).status).toBe(402);
  }, 120_000); // a CLI process opening the data folder

  it('keeps an audit log of who did what', async () => {
    const res = await adminCall('/audit?limit=1000');
    const entries = (await res.json()) as { data: { actor_key_id: string; action: string; target: string }[] };
    const actions = new Set(entries.data.map((e) => e.action));
    for (const action of [
      'org.create',
      'credits.add',
      'key.create',
      'org.budget',
      'key.update',
      'key.budget',
      'key.revoke',
      'key.rotate',
    ]) {
      expect(actions).toContain(action);
    }
    const ownerKeyId = (await app.container.services.auth.authenticate(`Bearer ${admin}`, {
      clientIp: '127.0.0.1',
      surface: 'main',
    })) as { keyId: string };
    // Every change was made with the owner key, but the key the CLI created, which names the CLI.
    expect(new Set(entries.data.map((e) => e.actor_key_id))).toEqual(new Set([ownerKeyId.keyId, 'cli']));
  });
});
