/**
 * LangGraph crons on Prism (docs/langgraph.md), driven by the LangGraph JS SDK's Client: two replicas of the app on
 * one database and one stepped clock; each firing starts exactly one run whichever replica polls first (both are
 * made to poll at every step, and their own timers poll too), on the cron's thread or on a new thread; the runs are
 * executions billed to the cron's owner; crons are searched, counted, updated and deleted; a cron survives the
 * replicas' restart, and a cron that slept through several firings fires once, then keeps to its schedule.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import type { Firing } from '../../src/services/langgraph/crons';
import { startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, startTestApp, type TestApp } from '../helpers/test-app';
import { writeLabModelsFile } from '../helpers/upstream-app';

jest.setTimeout(180_000);

const T0 = Date.parse('2026-03-02T10:00:30Z');
const at = (hhmm: string): string => `2026-03-02T${hhmm}:00.000Z`;

describe('LangGraph crons across two replicas with a stepped clock', () => {
  let now = T0;
  const clock = (): Date => new Date(now);
  let upstream: ScriptedUpstream;
  let modelsDir: string;
  let dataDir: string;
  let env: Record<string, string>;
  let apps: TestApp[] = [];
  let key: string;
  let client: Client;

  const clientOn = (app: TestApp): Client =>
    new Client({ apiUrl: `${app.url}/v1/langgraph`, defaultHeaders: { Authorization: `Bearer ${key}` } });

  /** Steps the clock and has every replica poll at once; returns the firings they claimed. */
  const stepTo = async (iso: string): Promise<Firing[]> => {
    now = Date.parse(iso);
    const fired = (await Promise.all(apps.map((a) => a.container.services.langgraph.crons.tick()))).flat();
    await Promise.all(apps.map((a) => a.container.services.langgraph.crons.idle()));
    return fired;
  };

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    upstream.forModel('planner-llm', {
      kind: 'reply',
      content: 'Report written.',
      usage: { prompt_tokens: 40, completion_tokens: 10 },
    });
    modelsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-lg-crons-'));
    env = {
      PRISM_MODELS_FILE: writeLabModelsFile(modelsDir, upstream.baseUrl, [
        { id: 'prism-orion-1', upstreamModel: 'planner-llm', pricing: { prompt: 1.0, completion: 1.0 } },
      ]),
    };
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-lg-crons-data-'));
    apps.push(await startTestApp(env, dataDir, { clock }));
    apps.push(await startTestApp(env, dataDir, { clock }));
    key = await apps[0]!.createKey('cron-org');
    await apps[0]!.container.services.accounts.addCredits('cron-org', 5);
    client = clientOn(apps[0]!);
  });
  afterAll(async () => {
    await Promise.allSettled(apps.slice(0, -1).map((a) => a.stop()));
    await apps.at(-1)?.close();
    await upstream.close();
    fs.rmSync(modelsDir, { recursive: true, force: true });
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('each firing runs exactly once on the replicas, billed to the owner; crons are listed, updated, deleted', async () => {
    const thread = await client.threads.create({ metadata: { purpose: 'reports' } });
    const onThread = await client.crons.createForThread(thread.thread_id, 'agent', {
      schedule: '*/5 * * * *',
      input: { messages: [{ role: 'user', content: 'Write the five-minute report' }] },
      metadata: { job: 'report' },
    });
    expect(onThread).toMatchObject({ thread_id: thread.thread_id, schedule: '*/5 * * * *', enabled: true });
    expect(onThread.next_run_date).toBe(at('10:05'));
    // Created on one replica, seen on the other.
    const stateless = await clientOn(apps[1]!).crons.create('agent', {
      schedule: '*/10 * * * *',
      input: { messages: [{ role: 'user', content: 'Write the ten-minute digest' }] },
      onRunCompleted: 'keep',
    });
    expect(stateless.next_run_date).toBe(at('10:10'));
    // A stateless cron's thread is deleted after its run unless on_run_completed is 'keep'.
    const cleaned = await client.crons.create('agent', {
      schedule: '15 10 * * *',
      input: { messages: [{ role: 'user', content: 'Clean up after yourself' }] },
    });
    expect((cleaned as unknown as { on_run_completed: string }).on_run_completed).toBe('delete');
    expect(await client.crons.count()).toBe(3);
    expect((await client.crons.search({ threadId: thread.thread_id })).map((c) => c.cron_id)).toEqual([
      onThread.cron_id,
    ]);
    await expect(client.crons.create('agent', { schedule: '61 * * * *' })).rejects.toThrow(/400/);
    await expect(client.crons.create('agent', { schedule: '@hourly', webhook: 'ftp://example.com/x' })).rejects.toThrow(
      /400/,
    );
    await expect(client.crons.create('no-such-assistant', { schedule: '@hourly' })).rejects.toThrow(/404/);

    const balance = async (): Promise<number> =>
      (await apps[0]!.container.services.accounts.balance('cron-org')).balanceUsd;
    const before = await balance();

    const fired: Firing[] = [];
    fired.push(...(await stepTo('2026-03-02T10:04:59Z')));
    expect(fired).toEqual([]);
    for (const step of ['10:05', '10:10', '10:15']) fired.push(...(await stepTo(`2026-03-02T${step}:01Z`)));
    // Whichever replica (or timer) claimed them, the claims were unique.
    const claimed = fired.map((f) => `${f.cron_id}@${f.due}`);
    expect(new Set(claimed).size).toBe(claimed.length);

    // The thread got one run per firing of its cron, each a completed Prism execution.
    const runs = await client.runs.list(thread.thread_id, { limit: 100 });
    expect(runs.map((r) => r.metadata?.cron_due).sort()).toEqual([at('10:05'), at('10:10'), at('10:15')]);
    expect(runs.every((r) => r.status === 'success' && r.metadata?.cron_id === onThread.cron_id)).toBe(true);
    const state = await client.threads.getState<{ messages: { type: string }[] }>(thread.thread_id);
    expect(state.values.messages.filter((m) => m.type === 'human')).toHaveLength(3);
    const executionId = (runs[0] as unknown as { execution_id: string }).execution_id;
    const execution = (await (await call(`${apps[1]!.url}/v1/agent/executions/${executionId}`, { key })).json()) as {
      status: string;
      usage: { steps: number };
    };
    expect(execution.status).toBe('completed');
    expect(execution.usage.steps).toBeGreaterThan(0);
    // Five runs (three on the thread, one per stateless cron) of 50 planner tokens at $1 per million: $0.00025 off
    // the owner's wallet.
    expect(Math.round((before - (await balance())) * 1e6)).toBe(250);
    expect(await client.threads.search({ metadata: { cron_id: cleaned.cron_id } })).toEqual([]);

    // The stateless cron fired once (at 10:10), on a new thread it keeps.
    const made = await client.threads.search({ metadata: { cron_id: stateless.cron_id } });
    expect(made).toHaveLength(1);
    const madeRuns = await client.runs.list(made[0]!.thread_id);
    expect(madeRuns.map((r) => [r.metadata?.cron_due, r.status])).toEqual([[at('10:10'), 'success']]);

    // Disabled, it does not fire; deleted, it is gone.
    const disabled = await client.crons.update(stateless.cron_id, { enabled: false });
    expect(disabled.next_run_date).toBeNull();
    expect((await stepTo('2026-03-02T10:20:01Z')).map((f) => f.cron_id)).not.toContain(stateless.cron_id);
    await client.crons.delete(stateless.cron_id);
    await client.crons.delete(cleaned.cron_id);
    await expect(client.crons.delete(stateless.cron_id)).rejects.toThrow(/404/);
    expect((await client.crons.search()).map((c) => c.cron_id)).toEqual([onThread.cron_id]);
    expect(await client.runs.list(made[0]!.thread_id)).toHaveLength(1);
    // Another organisation sees none of them.
    const otherKey = await apps[0]!.createKey('cron-other');
    const other = new Client({
      apiUrl: `${apps[0]!.url}/v1/langgraph`,
      defaultHeaders: { Authorization: `Bearer ${otherKey}` },
    });
    expect(await other.crons.search()).toEqual([]);
    await expect(other.crons.delete(onThread.cron_id)).rejects.toThrow(/404/);
  });

  it('survives a restart of the replicas: a cron that slept through firings fires once, then on schedule', async () => {
    const [cron] = await client.crons.search();
    const threadId = cron!.thread_id!;
    const runsBefore = (await client.runs.list(threadId, { limit: 100 })).length;
    for (const app of apps) await app.stop();
    now = Date.parse('2026-03-02T10:41:00Z'); // 10:25 ... 10:40 were missed while no replica ran
    apps = [await startTestApp(env, dataDir, { clock })];
    client = clientOn(apps[0]!);
    // (The new replica's own timer may poll first: the runs, not this poll's claims, say what fired.)
    await stepTo('2026-03-02T10:41:00Z');
    const runs = await client.runs.list(threadId, { limit: 100 });
    expect(runs).toHaveLength(runsBefore + 1);
    expect(runs.map((r) => r.metadata?.cron_due)).toContain(at('10:25'));
    const [again] = await client.crons.search();
    expect(again!.next_run_date).toBe(at('10:45'));
  });
});
