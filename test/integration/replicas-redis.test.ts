/**
 * Two replicas of the real app sharing Redis (and, here, one SQLite file): an MCP `notifications/cancelled` that
 * reaches replica B stops the agent run that replica A is running (its upstream call is dropped and the execution
 * ends cancelled), a batch execution queued on A is run by the shared queue exactly once, and the 61st call of a
 * minute is refused whichever replica it reaches.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { connectMcp, toolOutput } from '../helpers/mcp-client';
import { deleteKeys, describeWithRedis, uniquePrefix } from '../helpers/redis';
import { startReplicas, type Replicas } from '../helpers/replicas';
import { startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream';
import { call } from '../helpers/test-app';
import { writeLabModelsFile } from '../helpers/upstream-app';

const PLANNER = {
  id: 'prism-orion-2',
  upstreamModel: 'planner-llm',
  parameters: ['tools', 'tool_choice', 'temperature'],
  pricing: { prompt: 2.0, completion: 4.0 },
};

describeWithRedis('replicas sharing Redis', (redisUrl) => {
  const prefix = uniquePrefix();
  let upstream: ScriptedUpstream;
  let replicas: Replicas;
  let modelsDir: string;
  let key: string;

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    modelsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-replica-models-'));
    const modelsFile = writeLabModelsFile(modelsDir, upstream.baseUrl, [PLANNER], { provider: 'vLLM' });
    replicas = await startReplicas(2, {
      PRISM_MODELS_FILE: modelsFile,
      PRISM_REDIS_URL: redisUrl,
      PRISM_REDIS_PREFIX: prefix,
      PRISM_JOB_LEASE_S: '1',
    });
    const [a] = replicas.apps;
    key = await a!.createKey('replica-org', 'pro');
    await a!.container.services.accounts.addCredits('replica-org', 5);
  });
  afterAll(async () => {
    await replicas.close();
    await upstream.close();
    fs.rmSync(modelsDir, { recursive: true, force: true });
    await deleteKeys(redisUrl, prefix);
  });

  it('stops the run on replica A when the cancel reaches replica B', async () => {
    const [a, b] = replicas.apps;
    // The client talks to A; we read the JSON-RPC id of its tools/call on the way.
    const sent: { method?: string; id?: number | string }[] = [];
    const client = new Client({ name: 'replica-test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${a!.url}/mcp?toolsets=agents`), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
        fetch: async (url, init) => {
          if (typeof init?.body === 'string') sent.push(JSON.parse(init.body) as { method?: string });
          return fetch(url, init);
        },
      }),
    );
    upstream.next({ kind: 'hang' });
    const before = upstream.requests.length;
    const pending = client
      .callTool({ name: 'execute_agent', arguments: { model: PLANNER.id, config: { prompt: 'Say hello' } } })
      .catch((error: unknown) => error);
    while (upstream.requests.length === before) await new Promise((resolve) => setTimeout(resolve, 20));
    const held = upstream.requests[before]!;
    const requestId = sent.find((m) => m.method === 'tools/call')?.id;
    expect(requestId).toBeDefined();

    const cancel = await fetch(`${b!.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } }),
    });
    expect(cancel.status).toBe(202);
    await held.closed;
    expect(held.closedEarly).toBe(true);

    const reader = await connectMcp(b!.url, `Bearer ${key}`, { toolsets: 'agents' });
    let newest: Record<string, unknown> = {};
    for (let i = 0; i < 200; i += 1) {
      newest = (
        toolOutput((await reader.callTool({ name: 'list_executions', arguments: { limit: 1 } })) as CallToolResult)
          .items as Record<string, unknown>[]
      )[0]!;
      if (newest.status === 'failed' || newest.status === 'completed') break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(newest).toMatchObject({ status: 'failed', response: null });
    expect((newest.usage as { message: string }).message).toMatch(/cancelled/);
    await reader.close();
    await client.close();
    await pending;
  });

  it('runs a batch execution queued on one replica once, on the shared queue', async () => {
    const [a, b] = replicas.apps;
    upstream.forModel('planner-llm', {
      kind: 'reply',
      content: '```json\n{"greeting": "hello"}\n```',
      usage: { prompt_tokens: 10, completion_tokens: 5 },
    });
    const before = upstream.requests.length;
    const res = await call(`${a!.url}/v1/agent/execute`, {
      key,
      json: { model: PLANNER.id, batch: true, config: { prompt: 'Say hello' } },
    });
    expect(res.status).toBe(200);
    const { id } = (await res.json()) as { id: string };
    await a!.container.jobs.idle();
    const done = (await (await call(`${b!.url}/v1/agent/executions/${id}`, { key })).json()) as {
      status: string;
      response: unknown;
    };
    expect(done).toMatchObject({ status: 'completed', response: { greeting: 'hello' } });
    expect(upstream.requests.length - before).toBe(1);
  });

  it('refuses the 61st call of a minute with 429 whichever replica it reaches', async () => {
    const [a, b] = replicas.apps;
    const limited = await a!.createKey('limited-org', 'pro');
    // Away from a minute's edge, so all 61 calls fall in one window.
    while (Date.now() % 60_000 > 50_000) await new Promise((resolve) => setTimeout(resolve, 500));
    const statuses = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        call(`${(i % 2 ? b : a)!.url}/v1/compat/models`, { key: limited }).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(60);
    for (const replica of [a, b]) {
      const refused = await call(`${replica!.url}/v1/compat/models`, { key: limited });
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('rate_limit_exceeded');
    }
  });
});
