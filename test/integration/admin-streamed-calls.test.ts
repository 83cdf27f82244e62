/**
 * Issue 47 item 3, the paid paths that billed the organisation without naming the key: the keys' and organisations'
 * budgets (docs/admin.md) also hold decision frames, the agents' `transcribe_audio` tool and priced embeddings.
 * Through real clients against the real app and a scripted upstream: a `ws` decision stream on a key with a small
 * budget gets `decision` events until the budget is spent, then an `error` event (402 `key_budget_exceeded`, naming
 * the frame's `seq`) while the session goes on; an organisation's budget stops a stream the same way; an agent run's
 * `transcribe_audio` holds the asking key's budget before the transcription model hears anything; embeddings on a
 * priced model through the openai SDK are held and refused the same way; and the spend report by key shows each.
 */
import OpenAI from 'openai';
import { connectStream } from '../helpers/decision-client';
import { solidFrame } from '../helpers/decision-frames';
import { call, uploadFile } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';
import { makeWav } from '../helpers/wav';

/** $0.06 a minute is $0.001 a second: a 3 s clip costs $0.003. */
const PER_MINUTE = 0.06;
/** $1000 per million tokens: a one-token input ("hi") costs, and is held at, $0.001. */
const EMBED_PER_MILLION = 1000;
/** The decisions' minimum charge (PRISM_DECISION_MIN_CHARGE_USD's default): what a local frame costs. */
const FRAME_USD = 0.0001;
const BRIGHTNESS = [{ id: 'level', question: 'How bright is it?', type: 'number' }];

interface SpendReport {
  rows: { group: string; calls: number; cost_usd: number }[];
}

describe('key and organisation budgets on decisions, the speech tool and embeddings', () => {
  let lab: UpstreamApp;
  const callsTo = (suffix: string) => lab.upstream.requests.filter((r) => r.path.endsWith(suffix)).length;
  const adminCall = (path: string, init: { method?: string; json?: unknown } = {}) =>
    call(`${lab.app.url}/v1/admin${path}`, { key: lab.app.ownerKey, ...init });
  const createKey = async (body: Record<string, unknown>): Promise<{ id: string; key: string }> => {
    const res = await adminCall('/keys', { json: body });
    expect(res.status).toBe(201);
    return (await res.json()) as { id: string; key: string };
  };
  const keyView = async (id: string) => (await (await adminCall(`/keys/${id}`)).json()) as Record<string, unknown>;
  const spendByKey = async () => ((await (await adminCall('/spend?group_by=key')).json()) as SpendReport).rows;

  beforeAll(async () => {
    lab = await startUpstreamApp(
      [
        {
          id: 'whisper',
          upstreamModel: 'whisper-up',
          capabilities: null,
          more: { mode: 'transcription', pricing: { per_minute: PER_MINUTE } },
        },
        {
          id: 'paid-embed',
          upstreamModel: 'embed-up',
          capabilities: null,
          more: { mode: 'embedding', pricing: { prompt: EMBED_PER_MILLION, completion: 0 } },
        },
        // A free planner: a run's own hold is the minimum, so only the speech tool spends the key's budget.
        {
          id: 'prism-orion-2',
          upstreamModel: 'planner-llm',
          parameters: ['tools', 'tool_choice', 'temperature'],
          pricing: { prompt: 0, completion: 0 },
        },
      ],
      { env: { PRISM_RATE_LIMIT_PER_MINUTE: '1000' } },
    );
    for (const org of ['streams', 'capped-streams']) {
      expect((await adminCall('/organisations', { json: { name: org, tier: 'pro' } })).status).toBe(201);
      expect((await adminCall(`/organisations/${org}/credits`, { json: { amount_usd: 10 } })).status).toBe(200);
    }
  });
  afterAll(() => lab.close());

  /** Opens a session, sends `frames` frames one after another, and answers every reply's type and error code. */
  async function streamFrames(key: string, frames: number): Promise<{ seq: number; type: string; code?: string }[]> {
    const client = await connectStream(lab.app.url, key);
    try {
      client.send({ type: 'session.create', questions: BRIGHTNESS });
      await client.next('session.created');
      const frame = await solidFrame('#808080');
      const replies: { seq: number; type: string; code?: string }[] = [];
      for (let seq = 1; seq <= frames; seq += 1) {
        await client.sendFrame(frame);
        const reply = await Promise.race([
          client.next('decision', (e) => e.seq === seq),
          client.next('error', (e) => e.seq === seq),
        ]);
        replies.push(
          reply.type === 'error' ? { seq, type: 'error', code: reply.error.code ?? '' } : { seq, type: 'decision' },
        );
      }
      return replies;
    } finally {
      await client.close();
    }
  }

  it("decision frames over ws stop with key_budget_exceeded when the key's budget is spent", async () => {
    const key = await createKey({ org: 'streams', name: 'camera', budget_usd: 5 * FRAME_USD, budget_period: 'daily' });
    const replies = await streamFrames(key.key, 7);
    expect(replies).toEqual([
      ...[1, 2, 3, 4, 5].map((seq) => ({ seq, type: 'decision' })),
      { seq: 6, type: 'error', code: 'key_budget_exceeded' },
      { seq: 7, type: 'error', code: 'key_budget_exceeded' },
    ]);
    expect(await keyView(key.id)).toMatchObject({ budget_spent_usd: 0.0005, spend_usd: 0.0005 });
    expect(await spendByKey()).toContainEqual({ group: key.id, calls: 5, cost_usd: 0.0005 });
    // A new session on the same key is refused frame by frame too: the budget is spent, not the session's.
    expect((await streamFrames(key.key, 1))[0]).toEqual({ seq: 1, type: 'error', code: 'key_budget_exceeded' });
  });

  it("the organisation's budget stops a key without a budget of its own, with the stream's error event", async () => {
    const set = await adminCall('/organisations/capped-streams/budget', {
      method: 'PUT',
      json: { budget_usd: 3 * FRAME_USD, budget_period: 'monthly' },
    });
    expect(set.status).toBe(200);
    const key = await createKey({ org: 'capped-streams' });
    const replies = await streamFrames(key.key, 4);
    expect(replies.map((r) => r.code ?? r.type)).toEqual(['decision', 'decision', 'decision', 'org_budget_exceeded']);
    const orgs = (await (await adminCall('/organisations')).json()) as { data: Record<string, unknown>[] };
    expect(orgs.data.find((o) => o.name === 'capped-streams')).toMatchObject({ budget_spent_usd: 0.0003 });
  });

  it("an agent run's transcribe_audio holds the asking key's budget before the transcription model hears it", async () => {
    const key = await createKey({ org: 'streams', name: 'speech-agent', budget_usd: 0.005, budget_period: 'none' });
    const uploaded = await uploadFile(lab.app.url, key.key, makeWav(3), { filename: 'memo.wav' });
    const { id: audio } = (await uploaded.json()) as { id: string };
    // The upstream answers in turn: the planner's tool call, the transcription (when it is asked), the answer.
    const run = async (transcribed: boolean) => {
      lab.upstream.next(
        { kind: 'reply', toolCalls: [{ id: 'c1', name: 'transcribe_audio', arguments: JSON.stringify({ audio }) }] },
        ...(transcribed ? [{ kind: 'transcription' as const }] : []),
        { kind: 'reply', content: '```json\n{"heard": true}\n```' },
      );
      const res = await call(`${lab.app.url}/v1/agent/execute`, {
        key: key.key,
        json: { model: 'prism-orion-2', config: { prompt: 'What does the memo say?' } },
      });
      expect(res.status).toBe(200);
      const execution = (await res.json()) as { status: string; steps: { name: string; error: string | null }[] };
      return execution.steps.find((s) => s.name === 'transcribe_audio');
    };
    expect((await run(true))?.error ?? null).toBeNull();
    const heard = callsTo('/audio/transcriptions');
    // $0.003 spent of $0.005: the next clip's $0.003 does not fit, and the tool fails before the model hears it.
    expect((await run(false))?.error).toMatch(/budget/);
    expect(callsTo('/audio/transcriptions')).toBe(heard);
    expect(await keyView(key.id)).toMatchObject({ budget_spent_usd: 0.003, spend_usd: 0.003 });
    expect(await spendByKey()).toContainEqual({ group: key.id, calls: 1, cost_usd: 0.003 });
  });

  it('embeddings on a priced model through the openai SDK spend the key budget and are refused when it is spent', async () => {
    const key = await createKey({ org: 'streams', name: 'embedder', budget_usd: 0.0025, budget_period: 'monthly' });
    const client = new OpenAI({ apiKey: key.key, baseURL: `${lab.app.url}/v1/compat`, maxRetries: 0 });
    for (let i = 0; i < 2; i += 1) {
      const reply = await client.embeddings.create({ model: 'paid-embed', input: 'hi' });
      expect(reply.data).toHaveLength(1);
      expect(reply.usage).toMatchObject({ prompt_tokens: 1, cost: 0.001 });
    }
    const embeds = callsTo('/embeddings');
    const refused = await client.embeddings.create({ model: 'paid-embed', input: 'hi' }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect([(refused as InstanceType<typeof OpenAI.APIError>).status]).toEqual([402]);
    expect(JSON.stringify((refused as InstanceType<typeof OpenAI.APIError>).error)).toContain('key_budget_exceeded');
    expect(callsTo('/embeddings')).toBe(embeds);
    expect(await keyView(key.id)).toMatchObject({ budget_spent_usd: 0.002, spend_usd: 0.002 });
    expect(await spendByKey()).toContainEqual({ group: key.id, calls: 2, cost_usd: 0.002 });
  });
});
