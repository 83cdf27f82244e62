/**
 * Issue 18, defect 5: concurrent gateway calls cannot overdraw a wallet or the guest cap. Each call reserves its
 * largest possible cost before the upstream is called; fifty concurrent calls at a wallet that covers ten get
 * exactly ten answers, and a failed call gives its reservation back.
 */
import type { ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, type TestApp } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

describe('wallet and guest-cap reservations', () => {
  let lab: UpstreamApp;
  let upstream: ScriptedUpstream;
  let app: TestApp;

  beforeAll(async () => {
    // $0.10 per completion token, prompts free: a call with `max_tokens: 10` can cost at most $1.
    lab = await startUpstreamApp(
      [
        {
          id: 'pricey',
          upstreamModel: 'pricey-upstream',
          parameters: ['max_tokens', 'stream'],
          pricing: { prompt: 0, completion: 100000 },
        },
      ],
      { apiKeyEnv: 'LAB_KEY', env: { LAB_KEY: 'sk-lab', PRISM_RATE_LIMIT_PER_MINUTE: '1000' } },
    );
    ({ app, upstream } = lab);
    upstream.forModel('pricey-upstream', {
      kind: 'reply',
      content: 'ten tokens',
      usage: { prompt_tokens: 5, completion_tokens: 10 },
      delayMs: 150,
    });
  });
  afterAll(() => lab.close());

  const chat = (init: { key?: string; maxTokens: number; headers?: Record<string, string> }) =>
    call(`${app.url}/v1/compat/chat/completions`, {
      ...(init.key ? { key: init.key } : {}),
      ...(init.headers ? { headers: init.headers } : {}),
      json: { model: 'pricey', max_tokens: init.maxTokens, messages: [{ role: 'user', content: 'hi' }] },
    });
  const balanceOf = async (org: string): Promise<number> => {
    const { orgId } = await app.container.services.accounts.addCredits(org, 0);
    return app.container.stores.wallets.balance(orgId);
  };

  it('lets exactly the covered calls of 50 concurrent ones through; the balance never goes below zero', async () => {
    const key = await app.createKey('tight', 'pro');
    await app.container.services.accounts.addCredits('tight', 10);
    const results = await Promise.all(Array.from({ length: 50 }, () => chat({ key, maxTokens: 10 })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 402)).toHaveLength(40);
    for (const r of results.filter((x) => x.status === 402)) {
      expect(await r.json()).toMatchObject({ detail: { error: { code: 'insufficient_credits' } } });
    }
    expect(await balanceOf('tight')).toBe(0);
    expect((await call(`${app.url}/v1/compat/health`)).status).toBe(200);
  });

  it('refuses a call whose largest cost the balance cannot cover, and releases a failed call', async () => {
    const key = await app.createKey('small', 'pro');
    await app.container.services.accounts.addCredits('small', 1);
    expect((await chat({ key, maxTokens: 11 })).status).toBe(402); // could cost $1.10
    upstream.next({ kind: 'error', status: 500, body: { error: { message: 'boom' } } });
    expect((await chat({ key, maxTokens: 10 })).status).toBe(502);
    expect(await balanceOf('small')).toBe(1_000_000);
    expect((await chat({ key, maxTokens: 10 })).status).toBe(201); // the failed call's hold was given back
    expect(await balanceOf('small')).toBe(0);
  });

  it('holds guest calls against the daily cap the same way', async () => {
    // $0.10 at most per call against the $0.50 cap: five of fifty concurrent guest calls.
    upstream.forModel('pricey-upstream', {
      kind: 'reply',
      content: 'one',
      usage: { prompt_tokens: 5, completion_tokens: 1 },
      delayMs: 150,
    });
    const results = await Promise.all(
      Array.from({ length: 50 }, () => chat({ maxTokens: 1, headers: { 'x-prism-fingerprint': 'fp-1' } })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 402)).toHaveLength(45);
  });
});
