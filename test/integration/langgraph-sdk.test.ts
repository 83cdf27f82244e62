/**
 * The LangGraph Platform API at /v1/langgraph driven by the LangGraph JS SDK's own Client (docs/langgraph.md):
 * assistants are Prism agents and their versions; threads keep checkpoints (state, history, update, copy, fork from
 * an earlier checkpoint); runs are Prism executions (wait, background + join, stream, cancel, list) with a scripted
 * planner upstream; interrupts are Prism pauses resumed with `command: {resume}`; a busy thread follows each
 * multitask strategy; the store puts, gets, filters, ranks by meaning and lists namespaces, per organisation.
 */
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { startCallbackReceiver } from '../helpers/callback-receiver';
import { startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, startTestApp, type TestApp } from '../helpers/test-app';
import { writeLabModelsFile } from '../helpers/upstream-app';

jest.setTimeout(120_000);

const PLANNER = {
  id: 'prism-orion-1',
  upstreamModel: 'planner-llm',
  pricing: { prompt: 1.0, completion: 1.0 },
  more: { total_timeout_s: 60 },
};

interface Msg {
  type: string;
  content: unknown;
  id?: string;
}
type Values = { messages: Msg[] };

const reply = (content: string, extra: { waitFor?: Promise<unknown> } = {}) => ({
  kind: 'reply' as const,
  content,
  usage: { prompt_tokens: 10, completion_tokens: 5 },
  ...extra,
});

describe('LangGraph SDK against /v1/langgraph', () => {
  let upstream: ScriptedUpstream;
  let dir: string;
  let app: TestApp;
  let client: Client;
  let other: Client;
  let key: string;

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-langgraph-'));
    app = await startTestApp({
      PRISM_MODELS_FILE: writeLabModelsFile(dir, upstream.baseUrl, [PLANNER]),
      PRISM_ALLOW_PRIVATE_URLS: '1',
      PRISM_WEBHOOK_SECRET: 'langgraph-hook-secret-1',
    });
    key = await app.createKey('lg-org');
    await app.container.services.accounts.addCredits('lg-org', 5);
    const otherKey = await app.createKey('lg-other');
    const apiUrl = `${app.url}/v1/langgraph`;
    client = new Client({ apiUrl, defaultHeaders: { Authorization: `Bearer ${key}` } });
    other = new Client({ apiUrl, defaultHeaders: { Authorization: `Bearer ${otherKey}` } });
  });
  afterAll(async () => {
    await app?.close();
    await upstream.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves assistants as Prism agents with versions and schemas', async () => {
    const found = await client.assistants.search({ graphId: 'agent' });
    expect(found.map((a) => a.assistant_id)).toContain('agent');
    const created = await client.assistants.create({
      graphId: 'agent',
      name: 'support-bot',
      config: { configurable: { prompt: 'You answer support questions.' } },
    });
    expect(created).toMatchObject({ graph_id: 'agent', name: 'support-bot', version: 1 });
    const updated = await client.assistants.update(created.assistant_id, {
      config: { configurable: { prompt: 'You answer briefly.' } },
    });
    expect(updated.version).toBe(2);
    const versions = await client.assistants.getVersions(created.assistant_id);
    expect(versions.map((v) => v.version)).toEqual([2, 1]);
    const schemas = await client.assistants.getSchemas(created.assistant_id);
    expect(schemas.input_schema).toMatchObject({ properties: { messages: { type: 'array' } } });
    await expect(other.assistants.get(created.assistant_id)).rejects.toThrow(/404/);
  });

  it('runs.wait answers on a thread; state, history, update state, fork and copy read its checkpoints', async () => {
    const thread = await client.threads.create({ metadata: { user: 'ada' } });
    upstream.next(reply('Paris is the capital.'));
    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'What is the capital of France?' }] },
    })) as Values;
    expect(values.messages.map((m) => m.type)).toEqual(['human', 'ai']);
    expect(values.messages[1]?.content).toBe('Paris is the capital.');
    const sent = JSON.stringify(upstream.requests.at(-1)?.body);
    expect(sent).toContain('What is the capital of France?');

    const state = await client.threads.getState<Values>(thread.thread_id);
    expect(state.values.messages).toHaveLength(2);
    const history = await client.threads.getHistory<Values>(thread.thread_id);
    expect(history.map((h) => h.values.messages.length)).toEqual([2, 1]);
    const firstInput = history[1]!.checkpoint.checkpoint_id!;

    upstream.next(reply('Berlin.'));
    const second = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ type: 'human', content: 'And of Germany?' }] },
    })) as Values;
    expect(second.messages).toHaveLength(4);
    // The planner saw the conversation so far.
    expect(JSON.stringify(upstream.requests.at(-1)?.body)).toContain('Paris is the capital.');

    // Time travel: a run from the first checkpoint forks the thread (the Germany turn is not in its input).
    upstream.next(reply('Madrid.'));
    const forked = (await client.runs.wait(thread.thread_id, 'agent', {
      checkpointId: firstInput,
      input: { messages: [{ type: 'human', content: 'And of Spain?' }] },
    })) as Values;
    expect(forked.messages.map((m) => m.content)).toEqual([
      'What is the capital of France?',
      'And of Spain?',
      'Madrid.',
    ]);

    await client.threads.updateState(thread.thread_id, {
      values: { messages: [{ type: 'ai', content: 'Noted by hand.' }] },
      asNode: 'agent',
    });
    expect((await client.threads.getState<Values>(thread.thread_id)).values.messages.at(-1)?.content).toBe(
      'Noted by hand.',
    );

    const copy = await client.threads.copy(thread.thread_id);
    expect((await client.threads.getHistory(copy.thread_id, { limit: 100 })).length).toBe(
      (await client.threads.getHistory(thread.thread_id, { limit: 100 })).length,
    );
    const searched = await client.threads.search({ metadata: { user: 'ada' } });
    expect(searched.map((t) => t.thread_id)).toContain(thread.thread_id);
    await expect(other.threads.get(thread.thread_id)).rejects.toThrow(/404/);
    await client.threads.delete(copy.thread_id);
    await expect(client.threads.get(copy.thread_id)).rejects.toThrow(/404/);
  });

  it('background run + join, list and get; the run points at its Prism execution', async () => {
    const thread = await client.threads.create();
    upstream.next(reply('Background answer.'));
    const run = await client.runs.create(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'Work in the background' }] },
    });
    expect(['pending', 'running']).toContain(run.status);
    const joined = (await client.runs.join(thread.thread_id, run.run_id)) as unknown as Values;
    expect(joined.messages.at(-1)?.content).toBe('Background answer.');
    const got = (await client.runs.get(thread.thread_id, run.run_id)) as unknown as {
      status: string;
      execution_id: string;
    };
    expect(got.status).toBe('success');
    // The run is a Prism execution, billed and metered as one.
    const res = await call(`${app.url}/v1/agent/executions/${got.execution_id}`, { key });
    const execution = (await res.json()) as { status: string; usage: { credits_used: number; steps: number } };
    expect(execution.status).toBe('completed');
    expect(execution.usage.steps).toBeGreaterThan(0);
    const runs = await client.runs.list(thread.thread_id);
    expect(runs.map((r) => r.run_id)).toEqual([run.run_id]);
  });

  it("a run's webhook receives the LangGraph run, signed, when it ends", async () => {
    const receiver = await startCallbackReceiver();
    try {
      const thread = await client.threads.create();
      upstream.next(reply('Hooked answer.'));
      const run = await client.runs.create(thread.thread_id, 'agent', {
        input: { messages: [{ role: 'user', content: 'Tell the hook' }] },
        webhook: receiver.url,
        metadata: { source: 'hook-test' },
      });
      await client.runs.join(thread.thread_id, run.run_id);
      for (let i = 0; i < 200 && receiver.received.length === 0; i += 1) await new Promise((r) => setTimeout(r, 25));
      expect(receiver.received).toHaveLength(1);
      const hook = receiver.received[0]!;
      expect(hook.event).toBe('langgraph.run.success');
      expect(hook.signature).toBe(
        `sha256=${createHmac('sha256', 'langgraph-hook-secret-1').update(hook.body).digest('hex')}`,
      );
      const body = JSON.parse(hook.body) as Record<string, unknown> & Values;
      expect(body).toMatchObject({
        run_id: run.run_id,
        thread_id: thread.thread_id,
        assistant_id: 'agent',
        status: 'success',
        metadata: { source: 'hook-test' },
      });
      expect(typeof body.run_started_at).toBe('string');
      expect(typeof body.webhook_sent_at).toBe('string');
      expect((body.values as Values).messages.map((m) => m.content)).toEqual(['Tell the hook', 'Hooked answer.']);
      // The URL is checked when the run is asked for, as /v1/agent/execute checks callback_url.
      await expect(
        client.runs.create(thread.thread_id, 'agent', {
          input: { messages: [{ role: 'user', content: 'again' }] },
          webhook: 'ftp://example.com/hook',
        }),
      ).rejects.toThrow(/400/);
    } finally {
      await receiver.close();
    }
  });

  it('streams values and updates with run metadata, and joinStream gives the outcome', async () => {
    const thread = await client.threads.create();
    upstream.next(reply('Streamed answer.'));
    const events: { event: string; data: unknown }[] = [];
    for await (const chunk of client.runs.stream(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'Stream please' }] },
      streamMode: ['values', 'updates'],
    })) {
      events.push(chunk);
    }
    expect(events[0]?.event).toBe('metadata');
    const values = events.filter((e) => e.event === 'values').map((e) => e.data as Values);
    expect(values[0]?.messages).toHaveLength(1);
    expect(values.at(-1)?.messages.at(-1)?.content).toBe('Streamed answer.');
    expect(events.some((e) => e.event === 'updates')).toBe(true);
    const [run] = await client.runs.list(thread.thread_id);
    const joined: string[] = [];
    for await (const chunk of client.runs.joinStream(thread.thread_id, run!.run_id)) joined.push(chunk.event);
    expect(joined).toEqual(['metadata', 'values']);
  });

  it('interrupt_before pauses the run (a Prism pause); command.resume continues it', async () => {
    const thread = await client.threads.create();
    upstream.next({
      kind: 'reply',
      toolCalls: [{ id: 'call_ocr', name: 'ocr_image', arguments: JSON.stringify({ image: 'img_missing' }) }],
      usage: { prompt_tokens: 10, completion_tokens: 10 },
    });
    const paused = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'Read the receipt' }] },
      interruptBefore: ['ocr_image'],
    })) as Values & { __interrupt__?: { value: { tool_call: { name: string } } }[] };
    expect(paused.__interrupt__?.[0]?.value.tool_call.name).toBe('ocr_image');
    expect((await client.threads.get(thread.thread_id)).status).toBe('interrupted');
    const state = await client.threads.getState(thread.thread_id);
    expect(state.next).toEqual(['tools']);

    upstream.next(reply('I did not read it, as you asked.'));
    const resumed = (await client.runs.wait(thread.thread_id, 'agent', {
      command: { resume: { action: 'reject', reason: 'not now' } },
    })) as Values;
    expect(resumed.messages.at(-1)?.content).toBe('I did not read it, as you asked.');
    expect((await client.threads.get(thread.thread_id)).status).toBe('idle');
  });

  it('multitask strategies on a busy thread: reject, interrupt, rollback and enqueue', async () => {
    const thread = await client.threads.create();
    let release: (v?: unknown) => void = () => undefined;
    upstream.next(reply('slow one', { waitFor: new Promise((r) => (release = r)) }));
    const first = await client.runs.create(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'first' }] },
    });
    await expect(
      client.runs.create(thread.thread_id, 'agent', {
        input: { messages: [{ role: 'user', content: 'second' }] },
        multitaskStrategy: 'reject',
      }),
    ).rejects.toThrow(/409/);

    // enqueue (the default) starts after the busy run ends.
    upstream.next(reply('queued answer'));
    const queued = client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'queued' }] },
    }) as Promise<Values>;
    release();
    const afterQueue = await queued;
    expect(afterQueue.messages.map((m) => m.content)).toEqual(['first', 'slow one', 'queued', 'queued answer']);
    expect((await client.runs.get(thread.thread_id, first.run_id)).status).toBe('success');

    // interrupt: the busy run is cancelled and kept as interrupted; rollback: it is forgotten.
    for (const strategy of ['interrupt', 'rollback'] as const) {
      let unblock: (v?: unknown) => void = () => undefined;
      upstream.next(reply('never seen', { waitFor: new Promise((r) => (unblock = r)) }));
      const busy = await client.runs.create(thread.thread_id, 'agent', {
        input: { messages: [{ role: 'user', content: `busy ${strategy}` }] },
      });
      // Busy means its model call has been made (else the new run would be the one to get the held reply).
      const asked = (): boolean => upstream.requests.some((r) => JSON.stringify(r.body).includes(`busy ${strategy}`));
      for (let i = 0; i < 2400 && !asked(); i += 1) await new Promise((r) => setTimeout(r, 25));
      expect(asked()).toBe(true);
      upstream.next(reply(`after ${strategy}`));
      const waiting = client.runs.wait(thread.thread_id, 'agent', {
        input: { messages: [{ role: 'user', content: `new ${strategy}` }] },
        multitaskStrategy: strategy,
      }) as Promise<Values>;
      // Once the busy run is stopped its held reply is no one's: let it go (a run that took it would end, not hang).
      const stopped = async (): Promise<boolean> =>
        client.runs.get(thread.thread_id, busy.run_id).then(
          (r) => r.status === 'interrupted',
          () => true,
        );
      for (let i = 0; i < 2400 && !(await stopped()); i += 1) await new Promise((r) => setTimeout(r, 25));
      unblock();
      const done = await waiting;
      expect(done.messages.at(-1)?.content).toBe(`after ${strategy}`);
      if (strategy === 'interrupt') {
        expect((await client.runs.get(thread.thread_id, busy.run_id)).status).toBe('interrupted');
      } else {
        await expect(client.runs.get(thread.thread_id, busy.run_id)).rejects.toThrow(/404/);
        expect(done.messages.map((m) => m.content)).not.toContain('busy rollback');
      }
    }
  });

  it('agents remember and recall through the store: an execution keeps a note, another finds it by meaning', async () => {
    const execute = async (k: string, prompt: string) =>
      (await (
        await call(`${app.url}/v1/agent/execute`, { key: k, json: { inputs: {}, config: { prompt } } })
      ).json()) as {
        status: string;
      };
    const toolCall = (name: string, args: Record<string, unknown>) => ({
      kind: 'reply' as const,
      toolCalls: [{ id: `call_${name}`, name, arguments: JSON.stringify(args) }],
      usage: { prompt_tokens: 10, completion_tokens: 10 },
    });
    const toolResultOf = (request: { body: unknown } | undefined): string => {
      const messages = (request?.body as { messages: { role: string; content: unknown }[] }).messages;
      return JSON.stringify(messages.filter((m) => m.role === 'tool').at(-1)?.content ?? null);
    };

    upstream.next(toolCall('remember', { text: 'Ada prefers green tea in the morning', key: 'ada-drink' }));
    upstream.next(reply('Noted.'));
    expect((await execute(key, 'Remember that Ada prefers green tea in the morning')).status).toBe('completed');
    expect(toolResultOf(upstream.requests.at(-1))).toContain('ada-drink');
    // What the agent kept is a store item a LangGraph client reads, and may add to.
    const kept = await client.store.getItem(['prism', 'memories'], 'ada-drink');
    expect(kept?.value).toMatchObject({ text: 'Ada prefers green tea in the morning' });
    await client.store.putItem(['prism', 'memories'], 'bob-hobby', { text: 'Bob goes hiking in the mountains' });

    upstream.next(toolCall('recall', { query: 'what does Ada like to drink' }));
    upstream.next(reply('Green tea.'));
    expect((await execute(key, 'What should I offer Ada to drink?')).status).toBe('completed');
    const recalled = JSON.parse(JSON.parse(toolResultOf(upstream.requests.at(-1))) as string) as {
      memories: { key: string; text: string }[];
    };
    expect(recalled.memories.map((m) => m.key)).toEqual(['ada-drink', 'bob-hobby']);

    // Another organisation's agent recalls nothing of it.
    const otherKey = await app.createKey('lg-memory-other');
    await app.container.services.accounts.addCredits('lg-memory-other', 1);
    upstream.next(toolCall('recall', { query: 'what does Ada like to drink' }));
    upstream.next(reply('I do not know.'));
    expect((await execute(otherKey, 'What does Ada drink?')).status).toBe('completed');
    const theirs = JSON.parse(JSON.parse(toolResultOf(upstream.requests.at(-1))) as string) as { memories: unknown[] };
    expect(theirs.memories).toEqual([]);
  });

  it('the store: put, get, filter, search by meaning, namespaces, delete, per organisation', async () => {
    await client.store.putItem(['memories', 'ada'], 'm1', {
      text: 'Ada prefers green tea in the morning',
      kind: 'pref',
    });
    await client.store.putItem(['memories', 'ada'], 'm2', { text: 'Ada works on compiler optimisation', kind: 'work' });
    await client.store.putItem(['memories', 'bob'], 'm3', { text: 'Bob likes hiking in mountains', kind: 'pref' });
    const item = await client.store.getItem(['memories', 'ada'], 'm1');
    expect(item?.value).toMatchObject({ kind: 'pref' });
    const prefs = await client.store.searchItems(['memories'], { filter: { kind: 'pref' } });
    expect(prefs.items.map((i) => i.key).sort()).toEqual(['m1', 'm3']);
    const ranked = await client.store.searchItems(['memories'], { query: 'what does Ada drink, tea or coffee' });
    expect(ranked.items[0]?.key).toBe('m1');
    const namespaces = await client.store.listNamespaces({ prefix: ['memories'] });
    expect(namespaces.namespaces).toEqual([
      ['memories', 'ada'],
      ['memories', 'bob'],
    ]);
    await expect(other.store.getItem(['memories', 'ada'], 'm1')).rejects.toThrow(/404/);
    expect((await other.store.searchItems(['memories'])).items).toEqual([]);
    await client.store.deleteItem(['memories', 'ada'], 'm1');
    await expect(client.store.getItem(['memories', 'ada'], 'm1')).rejects.toThrow(/404/);
  });
});
