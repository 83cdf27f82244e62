/**
 * A second message to a busy agent chat (plain HTTP on /v1/compat/chat/completions, docs/agents.md): `enqueue` (the
 * default) runs after the turn in progress, on the thread as that turn left it; `reject` is 409 `thread_busy`;
 * `interrupt` stops the running turn (its caller gets 409 `turn_interrupted`) and keeps its user message in the
 * thread; `rollback` stops it and keeps nothing of it. The planner is a scripted upstream whose reply is held.
 */
import type { ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, type TestApp } from '../helpers/test-app';
import { CHAT_PLANNER, startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

jest.setTimeout(120_000);

interface Sent {
  status: number;
  body: { session_id?: string; choices?: { message: { content: string } }[]; detail?: { error: { code: string } } };
}

describe('agent chat multitask strategies', () => {
  let lab: UpstreamApp;
  let upstream: ScriptedUpstream;
  let app: TestApp;
  let key: string;
  let sessionId: string;

  beforeAll(async () => {
    lab = await startUpstreamApp([CHAT_PLANNER], { provider: 'vLLM' });
    ({ app, upstream } = lab);
    key = await app.createKey('multitask-org');
    await app.container.services.accounts.addCredits('multitask-org', 5);
  });
  afterAll(() => lab.close());

  const send = async (text: string, extra: Record<string, unknown> = {}): Promise<Sent> => {
    const res = await call(`${app.url}/v1/compat/chat/completions`, {
      key,
      json: {
        model: 'prism-orion-1',
        messages: [{ role: 'user', content: text }],
        ...(sessionId ? { session_id: sessionId } : {}),
        ...extra,
      },
    });
    return { status: res.status, body: (await res.json()) as Sent['body'] };
  };
  const answerOf = (sent: Sent): string | undefined => sent.body.choices?.[0]?.message.content;
  const contents = async (): Promise<string[]> => {
    const res = await call(`${app.url}/v1/chat/messages?session_id=${sessionId}`, { key });
    return ((await res.json()) as { messages: { content: string }[] }).messages.map((m) => m.content);
  };
  const reply = (content: string, waitFor?: Promise<unknown>) => ({
    kind: 'reply' as const,
    content,
    usage: { prompt_tokens: 20, completion_tokens: 5 },
    ...(waitFor ? { waitFor } : {}),
  });
  /** Sends `text` as a turn whose planner reply is held; resolves once its planner call has been made. */
  const busyTurn = async (text: string): Promise<{ result: Promise<Sent>; release: () => void }> => {
    let release: () => void = () => undefined;
    upstream.next(reply(`answer to ${text}`, new Promise<void>((r) => (release = r))));
    const asked = upstream.requests.length;
    const result = send(text);
    for (let i = 0; i < 400 && upstream.requests.length === asked; i += 1) await new Promise((r) => setTimeout(r, 25));
    expect(upstream.requests.length).toBe(asked + 1);
    return { result, release };
  };
  const lastPlannerPrompt = (): string => JSON.stringify(upstream.requests.at(-1)?.body);

  it('starts a chat', async () => {
    upstream.next(reply('Hello, how can I help?'));
    const first = await send('Hello');
    expect(first.status).toBe(201);
    sessionId = first.body.session_id!;
    expect(await contents()).toEqual(['Hello', 'Hello, how can I help?']);
  });

  it('enqueue (the default): the second message runs after the first turn, on the thread it left', async () => {
    const busy = await busyTurn('first question');
    upstream.next(reply('queued answer'));
    const queued = send('second question');
    busy.release();
    const [first, second] = await Promise.all([busy.result, queued]);
    expect([first.status, answerOf(first)]).toEqual([201, 'answer to first question']);
    expect([second.status, answerOf(second)]).toEqual([201, 'queued answer']);
    expect(lastPlannerPrompt()).toContain('answer to first question');
    expect((await contents()).slice(2)).toEqual([
      'first question',
      'answer to first question',
      'second question',
      'queued answer',
    ]);
  });

  it('reject: 409 thread_busy while the turn runs; the running turn is unaffected', async () => {
    const busy = await busyTurn('slow question');
    const refused = await send('impatient', { multitask_strategy: 'reject' });
    expect(refused.status).toBe(409);
    expect(refused.body.detail?.error.code).toBe('thread_busy');
    busy.release();
    expect(answerOf(await busy.result)).toBe('answer to slow question');
    expect(await contents()).not.toContain('impatient');
  });

  it.each(['interrupt', 'rollback'] as const)(
    '%s: the running turn stops with 409 turn_interrupted and the new one answers',
    async (strategy) => {
      const before = (await contents()).length;
      const busy = await busyTurn(`long task ${strategy}`);
      upstream.next(reply(`after ${strategy}`));
      const newer = await send(`change of plan ${strategy}`, { multitask_strategy: strategy });
      busy.release();
      const stopped = await busy.result;
      expect(stopped.status).toBe(409);
      expect(stopped.body.detail?.error.code).toBe('turn_interrupted');
      expect([newer.status, answerOf(newer)]).toEqual([201, `after ${strategy}`]);
      const added = (await contents()).slice(before);
      if (strategy === 'interrupt') {
        // The stopped turn's message stays: the new turn's planner saw it.
        expect(added).toEqual([`long task ${strategy}`, `change of plan ${strategy}`, `after ${strategy}`]);
        expect(lastPlannerPrompt()).toContain(`long task ${strategy}`);
      } else {
        expect(added).toEqual([`change of plan ${strategy}`, `after ${strategy}`]);
        expect(lastPlannerPrompt()).not.toContain(`long task ${strategy}`);
      }
    },
  );

  it('refuses an unknown strategy with 422', async () => {
    expect((await send('hi', { multitask_strategy: 'shove' })).status).toBe(422);
  });
});
