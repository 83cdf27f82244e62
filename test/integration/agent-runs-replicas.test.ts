/**
 * Run events and cancels across replicas sharing Redis (docs/agent-runs.md): a client on replica B follows a run
 * that replica A runs (the "something changed" signals travel over Redis pub/sub; the events are read from the
 * shared store), and a cancel sent to B stops the run going on in A.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deleteKeys, describeWithRedis, uniquePrefix } from '../helpers/redis';
import { startReplicas, type Replicas } from '../helpers/replicas';
import { openRunEvents } from '../helpers/run-events-client';
import { startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream';
import { call } from '../helpers/test-app';
import { writeLabModelsFile } from '../helpers/upstream-app';

jest.setTimeout(120_000);

describeWithRedis('agent runs across replicas', (redisUrl) => {
  const prefix = uniquePrefix();
  let upstream: ScriptedUpstream;
  let replicas: Replicas;
  let modelsDir: string;
  let key: string;

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    modelsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-runs-replicas-'));
    const modelsFile = writeLabModelsFile(modelsDir, upstream.baseUrl, [
      { id: 'prism-orion-1', upstreamModel: 'planner-llm', pricing: { prompt: 1.0, completion: 1.0 } },
    ]);
    replicas = await startReplicas(2, {
      PRISM_MODELS_FILE: modelsFile,
      PRISM_REDIS_URL: redisUrl,
      PRISM_REDIS_PREFIX: prefix,
    });
    const [a] = replicas.apps;
    key = await a!.createKey('runs-replica-org', 'pro');
    await a!.container.services.accounts.addCredits('runs-replica-org', 5);
  });
  afterAll(async () => {
    await replicas.close();
    await upstream.close();
    fs.rmSync(modelsDir, { recursive: true, force: true });
    await deleteKeys(redisUrl, prefix);
  });

  it('a client on replica B follows the run replica A runs, and its changes are signalled over Redis', async () => {
    const [a, b] = replicas.apps;
    upstream.next({
      kind: 'reply',
      toolCalls: [{ id: 'c1', name: 'lookup_hub_domain', arguments: '{"domain": "document.invoice"}' }],
      usage: { prompt_tokens: 10, completion_tokens: 5 },
    });
    const paused = (await (
      await call(`${a!.url}/v1/agent/execute`, {
        key,
        json: { inputs: {}, config: { prompt: 'Look it up', require_approval: ['lookup_hub_domain'] } },
      })
    ).json()) as { id: string; status: string };
    expect(paused.status).toBe('paused');
    const signalled: string[] = [];
    const stop = b!.container.signals.subscribe(`executions:changed:${paused.id}`, (m) => void signalled.push(m));
    const watcher = await openRunEvents(`${b!.url}/v1/agent/executions/${paused.id}/events`, key);
    const first = await watcher.until((e) => e.event === 'execution.status' && e.data.status === 'paused');
    expect(first.map((e) => e.event)).toEqual(['execution.plan', 'execution.usage', 'execution.status']);

    upstream.next({ kind: 'reply', content: 'It reads invoices.', usage: { prompt_tokens: 10, completion_tokens: 5 } });
    const done = (await (
      await call(`${a!.url}/v1/agent/executions/${paused.id}/resume`, { key, json: { action: 'approve' } })
    ).json()) as { status: string };
    expect(done.status).toBe('completed');
    const rest = await watcher.until((e) => e.event === 'execution.done');
    expect(rest.map((e) => e.event)).toEqual([
      'execution.status',
      'execution.tool_call',
      'execution.tool_result',
      'execution.plan',
      'execution.usage',
      'execution.answer',
      'execution.usage',
      'execution.status',
      'execution.done',
    ]);
    stop();
    // Replica B heard replica A's changes (resumed, steps saved, completed) through Redis.
    expect(signalled.length).toBeGreaterThanOrEqual(3);
  });

  it('a cancel sent to replica B stops the run going on in replica A', async () => {
    const [a, b] = replicas.apps;
    upstream.next({ kind: 'hang' });
    const before = upstream.requests.length;
    const running = call(`${a!.url}/v1/agent/execute`, { key, json: { inputs: {}, config: { prompt: 'Wait' } } });
    while (upstream.requests.length === before) await new Promise((resolve) => setTimeout(resolve, 20));
    const id = ((await (await call(`${a!.url}/v1/agent/executions?limit=1`, { key })).json()) as { id: string }[])[0]!
      .id;
    const cancel = await call(`${b!.url}/v1/agent/executions/${id}/cancel`, { key, method: 'POST' });
    // B's answer waited for A to end the run (A's "changed" signal reached B through Redis).
    expect(((await cancel.json()) as { status: string }).status).toBe('failed');
    const ended = (await (await running).json()) as { id: string; status: string; usage: { message: string } };
    expect(ended).toMatchObject({ id, status: 'failed' });
    expect(ended.usage.message).toContain('cancelled');
  });
});
