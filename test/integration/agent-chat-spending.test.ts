/**
 * Agent chat has a balance floor: a turn on `prism-orion-1` is held before it starts, asked before each
 * planner round whether its hold still covers another, and never debits more than its hold — so a small wallet
 * with many concurrent turns of an expensive upstream planner never goes below zero. Through the openai SDK against
 * the scripted planner upstream.
 */
import OpenAI from 'openai';
import { call, type TestApp } from '../helpers/test-app';
import { CHAT_PLANNER, startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

/** A planner round that looks a domain up (so the loop goes on) and reports `prompt` tokens. */
const toolRound = (id: string, prompt: number) => ({
  kind: 'reply' as const,
  toolCalls: [{ id, name: 'lookup_hub_domain', arguments: '{"domain": "document.invoice"}' }],
  usage: { prompt_tokens: prompt, completion_tokens: 10 },
});

describe('agent chat spending', () => {
  let lab: UpstreamApp;
  let app: TestApp;

  beforeAll(async () => {
    lab = await startUpstreamApp([CHAT_PLANNER], { provider: 'vLLM', env: { PRISM_AGENT_MAX_STEPS: '4' } });
    ({ app } = lab);
  });
  afterAll(() => lab.close());

  const wallet = async (org: string, dollars: number): Promise<{ client: OpenAI; balance: () => Promise<number> }> => {
    const key = await app.createKey(org);
    const { orgId } = await app.container.services.accounts.addCredits(org, dollars);
    return {
      client: new OpenAI({ apiKey: key, baseURL: `${app.url}/v1/openai`, maxRetries: 0 }),
      balance: () => app.container.stores.wallets.balance(orgId),
    };
  };

  it('ten concurrent turns whose planner costs more than their hold leave a $0.05 wallet at or above zero', async () => {
    // One round of 51,000 prompt tokens at $2/M is $0.102: twice the wallet, three times a turn's hold.
    lab.upstream.forModel('planner-llm', {
      kind: 'reply',
      content: 'Invoices are read by document.invoice.',
      usage: { prompt_tokens: 51_000, completion_tokens: 100 },
    });
    const { client, balance } = await wallet('floor-org', 0.05);
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () =>
        client.chat.completions.create({
          model: 'prism-orion-1',
          messages: [{ role: 'user', content: 'Which domain reads invoices?' }],
        }),
      ),
    );
    const answered = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected');
    expect(answered.length).toBeGreaterThanOrEqual(1);
    for (const r of refused) expect((r.reason as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    const left = await balance();
    expect(left).toBeGreaterThanOrEqual(0);
    // What each answered turn paid is its hold at most, and the usage it reports is what it paid.
    const paid = 50_000 - left;
    const reported = answered.reduce(
      (sum, r) => sum + Math.round(Number((r.value.usage as unknown as { cost?: number }).cost ?? 0) * 1e6),
      0,
    );
    expect(reported).toBe(paid);
  });

  it('a planner that keeps calling tools is stopped before the round its hold cannot pay for, and billed what it used', async () => {
    // Rounds of 6,000 prompt tokens ($0.012 each): the hold (about $0.033) covers two, not the four of the step limit.
    lab.upstream.forModel('planner-llm', toolRound('call_loop', 6_000));
    const { client, balance } = await wallet('loop-org', 1);
    const before = await balance();
    const requestsBefore = lab.upstream.requests.length;
    const failure = await client.chat.completions
      .create({ model: 'prism-orion-1', messages: [{ role: 'user', content: 'Look it up, again and again.' }] })
      .then(
        () => null,
        (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
      );
    expect(failure?.status).toBe(402);
    expect(failure?.code).toBe('insufficient_credits');
    expect(failure?.message).toMatch(
      /reached its spending limit: another planner round would cost more than the \$0\.03\d+ held/,
    );
    const rounds = lab.upstream.requests.length - requestsBefore;
    expect(rounds).toBe(2);
    const paid = before - (await balance());
    // Billed the rounds it ran (6,000 + 10 tokens each at $2/$4 per million), which the hold covered.
    expect(paid).toBe(rounds * (6_000 * 2 + 10 * 4));
  });

  it('a turn that ends at the step limit is billed for the rounds it used, and answered with the error', async () => {
    lab.upstream.forModel('planner-llm', toolRound('call_step', 400));
    const { client, balance } = await wallet('steps-org', 1);
    const before = await balance();
    const requestsBefore = lab.upstream.requests.length;
    const failure = await client.chat.completions
      .create({ model: 'prism-orion-1', messages: [{ role: 'user', content: 'Keep looking.' }] })
      .then(
        () => null,
        (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
      );
    expect(failure?.status).toBe(502);
    expect(failure?.message).toMatch(/step limit/);
    expect(lab.upstream.requests.length - requestsBefore).toBe(4);
    // Four rounds of 400 + 10 tokens: $0.00336, above the $0.001 minimum.
    expect(before - (await balance())).toBe(4 * (400 * 2 + 10 * 4));
    const health = await call(`${app.url}/v1/health`);
    expect(health.status).toBe(200);
  });
});
