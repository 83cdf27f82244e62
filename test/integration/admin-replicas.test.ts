/**
 * A key's and an organisation's budgets across replicas (docs/admin.md): two apps on one PostgreSQL schema, a key
 * whose budget covers five calls, ten calls sent at once to each replica: exactly five pass in all, and what the
 * budget counted equals what the wallet was debited. Runs with PRISM_TEST_BACKEND=postgres…; on SQLite (one
 * serving process per file) it skips.
 */
import path from 'node:path';
import { APP_ON_POSTGRES, call, startTestApp, type TestApp } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

const describeReplicas = APP_ON_POSTGRES ? describe : describe.skip;
if (!APP_ON_POSTGRES) {
  console.log('admin-replicas: skipped, needs PRISM_TEST_BACKEND=postgres (replicas share one database)');
}

describeReplicas('budgets across two replicas on one database', () => {
  let lab: UpstreamApp;
  let second: TestApp;

  beforeAll(async () => {
    lab = await startUpstreamApp(
      [
        {
          id: 'pricey',
          upstreamModel: 'pricey-up',
          parameters: ['max_tokens'],
          pricing: { prompt: 0, completion: 100000 },
        },
      ],
      { apiKeyEnv: 'LAB_KEY', env: { LAB_KEY: 'sk-lab', PRISM_RATE_LIMIT_PER_MINUTE: '1000' } },
    );
    lab.upstream.forModel('pricey-up', {
      kind: 'reply',
      content: 'one',
      usage: { prompt_tokens: 3, completion_tokens: 1 },
      delayMs: 50,
    });
    second = await startTestApp(
      { LAB_KEY: 'sk-lab', PRISM_RATE_LIMIT_PER_MINUTE: '1000', PRISM_MODELS_FILE: path.join(lab.dir, 'models.yaml') },
      lab.app.dataDir,
    );
  });
  afterAll(async () => {
    await second?.stop();
    await lab?.close();
  });

  it('lets exactly the calls a key budget covers through, whichever replica they reach', async () => {
    const admin = (p: string, json: unknown, method = 'POST') =>
      call(`${lab.app.url}/v1/admin${p}`, { key: lab.app.ownerKey, json, method });
    const created = await admin('/keys', { org: 'acme', budget_usd: 0.5 });
    expect(created.status).toBe(201);
    const { key, id } = (await created.json()) as { key: string; id: string };
    await admin('/organisations/acme/credits', { amount_usd: 10 });

    const chat = (base: string) =>
      call(`${base}/v1/compat/chat/completions`, {
        key,
        json: { model: 'pricey', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }] },
      });
    const results = await Promise.all([
      ...Array.from({ length: 10 }, () => chat(lab.app.url)),
      ...Array.from({ length: 10 }, () => chat(second.url)),
    ]);
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 402)).toHaveLength(15);

    const view = await call(`${second.url}/v1/admin/keys/${id}`, { key: lab.app.ownerKey });
    expect(await view.json()).toMatchObject({ budget_spent_usd: 0.5 });
    const orgs = (await (await call(`${second.url}/v1/admin/organisations`, { key: lab.app.ownerKey })).json()) as {
      data: { name: string; balance_usd: number }[];
    };
    expect(orgs.data.find((o) => o.name === 'acme')!.balance_usd).toBeCloseTo(9.5, 6);
  }, 60_000);
});
