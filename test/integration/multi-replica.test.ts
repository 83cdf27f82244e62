/**
 * Three replicas of Prism as real processes on three ports, over one PostgreSQL schema, one Redis prefix and one
 * data folder (local blobs), with a scripted upstream standing in for the models. What several replicas must get
 * right together:
 * - the 61st call in a minute from one caller is 429 whichever replica it reaches;
 * - 20 background predictions queued on one replica complete exactly once each (the upstream counts the runs);
 * - a replica SIGKILLed during a job: another replica completes it after the lease;
 * - a replica stopped (SIGSTOP) past its lease finishes late: its finish is refused, the taking-over one's stands;
 * - an MCP `notifications/cancelled` that reaches replica B stops the call running on replica A;
 * - an agent run interrupted by killing its replica is finished from its checkpoint by another;
 * - a $0.01 wallet hit by 60 concurrent billed calls spread over the replicas ends at >= 0, each accepted call billed
 *   once, the rest refused with 402;
 * - the everyday flows (files, extraction, chat) with requests round-robined over the replicas.
 * Runs when PRISM_TEST_DATABASE_URL and PRISM_TEST_REDIS_URL are set (CI sets both); skips with one line otherwise.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Pool } from 'pg';
import { loadConfig } from '../../src/config/config';
import { createContainer, type Container } from '../../src/container';
import { startChildServer, type ChildServer } from '../helpers/child-server';
import { renderReceiptImage } from '../helpers/media-fixtures';
import { deleteKeys, testRedisUrl, uniquePrefix } from '../helpers/redis';
import { startScriptedUpstream, type RecordedRequest, type ScriptedUpstream } from '../helpers/scripted-upstream';
import { pidOwningLocalPort } from '../helpers/socket-owner';
import { call, uploadFile } from '../helpers/test-app';
import { writeLabModelsFile } from '../helpers/upstream-app';

const databaseUrl = process.env.PRISM_TEST_DATABASE_URL;
const ready = Boolean(databaseUrl && testRedisUrl);
if (!ready) {
  process.stderr.write(
    'multi-replica suite: skipped, set PRISM_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test and ' +
      'PRISM_TEST_REDIS_URL=redis://127.0.0.1:6379 to run it\n',
  );
}

jest.setTimeout(120_000);

const SCHEMA = { type: 'object', properties: { total: { type: 'number' } } };
const MODELS = [
  {
    id: 'lab-vl',
    upstreamModel: 'qwen-vl',
    capabilities: { supported_input_types: ['text', 'image'], json_schema: true, max_images: 4 },
    parameters: ['max_tokens', 'temperature', 'response_format'],
  },
  {
    id: 'lab-chat',
    upstreamModel: 'qwen-7b',
    parameters: ['max_tokens', 'temperature', 'stream'],
    pricing: { prompt: 2.0, completion: 4.0 },
  },
  {
    id: 'prism-orion-2',
    upstreamModel: 'planner-llm',
    parameters: ['tools', 'tool_choice', 'temperature'],
    pricing: { prompt: 2.0, completion: 4.0 },
  },
];

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const TAKEN_OVER = 'a run taken over by another worker finished late; its outcome is dropped';

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined>, timeoutMs = 60_000): Promise<T> {
  const giveUpAt = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null && value !== undefined) return value;
    if (Date.now() > giveUpAt) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

(ready ? describe : describe.skip)('three replicas on PostgreSQL and Redis', () => {
  const schema = `mr_${process.pid}_${randomBytes(3).toString('hex')}`;
  const prefix = uniquePrefix();
  let dataDir: string;
  let upstream: ScriptedUpstream;
  let admin: Container;
  let replicas: ChildServer[] = [];
  /** The settings every replica starts with (a replacement too). */
  let env: Record<string, string>;
  let key: string;
  let next = 0;
  /** The next replica, round-robin, as a load balancer would pick it. */
  const any = (): string => replicas[(next += 1) % replicas.length]!.url;
  const pids = (): number[] => replicas.map((r) => r.child.pid as number);

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-multi-'));
    env = {
      ...(databaseUrl ? { PRISM_DATABASE_URL: databaseUrl } : {}),
      PRISM_DATABASE_SCHEMA: schema,
      PRISM_REDIS_URL: testRedisUrl as string,
      PRISM_REDIS_PREFIX: prefix,
      PRISM_JOB_LEASE_S: '1',
      PRISM_SECRET: randomBytes(24).toString('hex'),
      PRISM_MODELS_FILE: writeLabModelsFile(dataDir, upstream.baseUrl, MODELS, { provider: 'vLLM' }),
    };
    // The operator's side (`prism keys create`, `prism credits add`): a container on the same database, no queue.
    admin = await createContainer(
      loadConfig({ ...env, PRISM_REDIS_URL: undefined, PRISM_DATA_DIR: dataDir, PRISM_LOG_LEVEL: 'silent' }),
    );
    await admin.start({ sweep: false, resumeJobs: false, backgroundCheckpoints: false });
    key = (await admin.services.accounts.createKey({ org: 'replicated', tier: 'pro' })).key;
    await admin.services.accounts.addCredits('replicated', 20);
    for (let i = 0; i < 3; i += 1) replicas.push(await startChildServer(dataDir, env));
  });

  afterAll(async () => {
    for (const replica of replicas) replica.child.kill('SIGTERM');
    await Promise.all(replicas.map((r) => r.exited));
    await admin?.close();
    await upstream?.close();
    if (databaseUrl) {
      const pool = new Pool({ connectionString: databaseUrl });
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}_checkpoints" CASCADE`);
      await pool.end();
    }
    if (testRedisUrl) await deleteKeys(testRedisUrl, prefix);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** SIGKILLs the replica whose upstream call `request` is, and forgets it. */
  async function killReplicaOf(request: RecordedRequest): Promise<void> {
    const pid = pidOwningLocalPort(request.remotePort, pids());
    expect(pid).not.toBeNull();
    const victim = replicas.find((r) => r.child.pid === pid) as ChildServer;
    victim.child.kill('SIGKILL');
    await victim.exited;
    replicas = replicas.filter((r) => r !== victim);
  }

  const predictionOf = async (id: string): Promise<{ status: string; response: unknown }> =>
    (await (await call(`${any()}/v1/predictions/${id}`, { key })).json()) as { status: string; response: unknown };

  const generate = (url: string, batch: boolean): Promise<Response> =>
    call(`${url}/v1/image/generate`, {
      key,
      json: {
        model: 'lab-vl',
        batch,
        images: [`data:image/png;base64,${renderReceiptImage().toString('base64')}`],
        config: { json_schema: SCHEMA },
      },
    });

  it('refuses the 61st call in a minute from one caller with 429, whichever replica it reaches', async () => {
    const limited = (await admin.services.accounts.createKey({ org: 'limited', tier: 'pro' })).key;
    while (Date.now() % 60_000 > 45_000) await sleep(500);
    const statuses = await Promise.all(
      Array.from({ length: 60 }, () => call(`${any()}/v1/compat/models`, { key: limited }).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(60);
    for (const replica of replicas) {
      expect((await call(`${replica.url}/v1/compat/models`, { key: limited })).status).toBe(429);
    }
  });

  it('completes 20 background predictions queued on one replica exactly once each', async () => {
    upstream.forModel('qwen-vl', { kind: 'reply', content: '{"total": 26.22}' });
    const before = upstream.requests.filter((r) => r.body.model === 'qwen-vl').length;
    const ids: string[] = [];
    for (let i = 0; i < 20; i += 1) {
      const res = await generate(replicas[0]!.url, true);
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { id: string }).id);
    }
    for (const id of ids) {
      const done = await until(`prediction ${id}`, async () => {
        const p = await predictionOf(id);
        return p.status === 'completed' || p.status === 'failed' ? p : null;
      });
      expect(done).toMatchObject({ status: 'completed', response: { total: 26.22 } });
    }
    await sleep(500);
    expect(upstream.requests.filter((r) => r.body.model === 'qwen-vl').length - before).toBe(20);
  });

  it('completes the job of a replica SIGKILLed mid-run on another replica', async () => {
    upstream.next({ kind: 'hang' });
    const before = upstream.requests.length;
    const res = await generate(replicas[0]!.url, true);
    const { id } = (await res.json()) as { id: string };
    await until('the upstream call', async () => (upstream.requests.length > before ? true : null));
    await killReplicaOf(upstream.requests[before]!);
    const done = await until(`prediction ${id}`, async () => {
      const p = await predictionOf(id);
      return p.status === 'completed' || p.status === 'failed' ? p : null;
    });
    expect(done).toMatchObject({ status: 'completed', response: { total: 26.22 } });
    expect(upstream.requests.length - before).toBe(2);
    replicas.push(await startChildServer(dataDir, env));
  });

  it('drops the late finish of a replica stopped past its lease, whose job another replica took over', async () => {
    const stale = gate();
    const fresh = gate();
    upstream.next(
      { kind: 'reply', content: '{"total": 1}', waitFor: stale.promise },
      { kind: 'reply', content: '{"total": 2}', waitFor: fresh.promise },
    );
    const before = upstream.requests.length;
    const res = await generate(replicas[0]!.url, true);
    const { id } = (await res.json()) as { id: string };
    await until('the upstream call', async () => (upstream.requests.length > before ? true : null));
    const pid = pidOwningLocalPort(upstream.requests[before]!.remotePort, pids());
    const stalled = replicas.find((r) => r.child.pid === pid) as ChildServer;
    // Stopped, it renews no lease: another replica's stalled check hands the job on, and that replica calls again.
    stalled.child.kill('SIGSTOP');
    try {
      await until('another replica takes the job over', async () =>
        upstream.requests.length > before + 1 ? true : null,
      );
    } finally {
      stalled.child.kill('SIGCONT');
    }
    expect(pidOwningLocalPort(upstream.requests[before + 1]!.remotePort, pids())).not.toBe(pid);
    stale.open();
    await until('the stalled replica finishes late', async () => (stalled.stderr().includes(TAKEN_OVER) ? true : null));
    expect(await predictionOf(id)).toMatchObject({ status: 'running' });
    fresh.open();
    const done = await until(`prediction ${id}`, async () => {
      const p = await predictionOf(id);
      return p.status === 'completed' || p.status === 'failed' ? p : null;
    });
    expect(done).toMatchObject({ status: 'completed', response: { total: 2 } });
    expect(upstream.requests.length - before).toBe(2);
  });

  it('stops the call on replica A when its notifications/cancelled reaches replica B', async () => {
    const [a, b] = replicas;
    const sent: { method?: string; id?: number | string }[] = [];
    const client = new Client({ name: 'multi-replica', version: '1' });
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
      .callTool({ name: 'execute_agent', arguments: { model: 'prism-orion-2', config: { prompt: 'Say hello' } } })
      .catch((error: unknown) => error);
    await until('the planner call', async () => (upstream.requests.length > before ? true : null));
    const requestId = sent.find((m) => m.method === 'tools/call')?.id;
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
    const held = upstream.requests[before]!;
    await held.closed;
    expect(held.closedEarly).toBe(true);
    await client.close();
    await pending;
  });

  it('finishes an agent run from its checkpoint on another replica after its replica is killed', async () => {
    upstream.next(
      {
        kind: 'reply',
        toolCalls: [{ id: 'call_hub', name: 'lookup_hub_domain', arguments: JSON.stringify({ name: 'invoice' }) }],
        usage: { prompt_tokens: 100, completion_tokens: 10 },
      },
      { kind: 'hang' },
      { kind: 'reply', content: '```json\n{"found": true}\n```', usage: { prompt_tokens: 100, completion_tokens: 10 } },
    );
    const before = upstream.requests.length;
    const res = await call(`${replicas[0]!.url}/v1/agent/execute`, {
      key,
      json: { model: 'prism-orion-2', batch: true, config: { prompt: 'Is there an invoice domain?' } },
    });
    const { id } = (await res.json()) as { id: string };
    await until('the second planner call', async () => (upstream.requests.length > before + 1 ? true : null));
    await killReplicaOf(upstream.requests[before + 1]!);
    const done = await until(`execution ${id}`, async () => {
      const e = (await (await call(`${any()}/v1/agent/executions/${id}`, { key })).json()) as {
        status: string;
        response: unknown;
        steps: { type?: string; tool?: string }[];
      };
      return e.status === 'completed' || e.status === 'failed' ? e : null;
    });
    expect(done).toMatchObject({ status: 'completed', response: { found: true } });
    // Three planner calls: the tool call, the one cut by the kill, and the resumed one; the tool ran once.
    const calls = upstream.requests.slice(before);
    expect(calls).toHaveLength(3);
    const resumed = calls[2]!.body as { messages: { role: string; tool_call_id?: string }[] };
    expect(resumed.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(['call_hub']);
    replicas.push(await startChildServer(dataDir, env));
  });

  it('fails, saying why, a synchronous agent run whose replica was killed', async () => {
    upstream.next({ kind: 'hang' });
    const before = upstream.requests.length;
    const pending = call(`${replicas[0]!.url}/v1/agent/execute`, {
      key,
      json: { model: 'prism-orion-2', config: { prompt: 'Say hello, slowly' } },
    }).catch((error: unknown) => error);
    await until('the planner call', async () => (upstream.requests.length > before ? true : null));
    await killReplicaOf(upstream.requests[before]!);
    // The caller's connection died with the replica.
    expect((await pending) instanceof Response).toBe(false);
    type ExecutionWire = { id: string; status: string; usage: { message: string | null } };
    const [newest] = (await (await call(`${any()}/v1/agent/executions`, { key })).json()) as ExecutionWire[];
    expect(newest?.status).toBe('running');
    // The live replicas stop hearing from it, and one of them fails it with the reason.
    const done = await until(`execution ${newest!.id}`, async () => {
      const e = (await (await call(`${any()}/v1/agent/executions/${newest!.id}`, { key })).json()) as ExecutionWire;
      return e.status === 'running' ? null : e;
    });
    expect(done.status).toBe('failed');
    expect(done.usage.message).toMatch(/The replica running this run stopped before it finished/);
    expect(upstream.requests.length - before).toBe(1);
    replicas.push(await startChildServer(dataDir, env));
  });

  it('keeps a $0.01 wallet at or above zero under 60 concurrent billed calls over the replicas', async () => {
    const org = await admin.services.accounts.createKey({ org: 'one-cent', tier: 'pro' });
    await admin.services.accounts.addCredits('one-cent', 0.01);
    upstream.forModel('qwen-7b', { kind: 'reply', content: 'ok', usage: { prompt_tokens: 5, completion_tokens: 1 } });
    const statuses = await Promise.all(
      Array.from({ length: 60 }, () =>
        call(`${any()}/v1/compat/chat/completions`, {
          key: org.key,
          json: { model: 'lab-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 },
        }).then((r) => r.status),
      ),
    );
    const accepted = statuses.filter((s) => s === 201).length;
    expect(accepted).toBeGreaterThan(0);
    expect(statuses.filter((s) => s !== 201).every((s) => s === 402)).toBe(true);
    await sleep(500);
    const balance = await admin.stores.wallets.balance(org.orgId);
    expect(balance).toBeGreaterThanOrEqual(0);
    // Each accepted call is billed the minimum charge once: the balance is what the accepted calls left.
    expect(balance).toBe(10_000 - accepted * 1000);
  });

  it('serves the everyday flows with requests round-robined over the replicas', async () => {
    const uploaded = await uploadFile(any(), key, 'replicated bytes', { filename: 'r.txt' });
    expect(uploaded.status).toBe(201);
    const file = (await uploaded.json()) as { id: string; public_url: string };
    for (let i = 0; i < replicas.length; i += 1) {
      expect(await (await call(`${any()}/v1/files/${file.id}/content`, { key })).text()).toBe('replicated bytes');
    }
    expect(await (await fetch(file.public_url)).text()).toBe('replicated bytes');

    upstream.forModel('qwen-vl', { kind: 'reply', content: '{"total": 9.5}' });
    const extracted = await generate(any(), false);
    const prediction = (await extracted.json()) as { id: string; status: string };
    expect(prediction.status).toBe('completed');
    expect(await predictionOf(prediction.id)).toMatchObject({ status: 'completed', response: { total: 9.5 } });

    upstream.forModel('qwen-7b', { kind: 'reply', content: 'hello from a replica' });
    const chat = await call(`${any()}/v1/compat/chat/completions`, {
      key,
      json: { model: 'lab-chat', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(((await chat.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content).toBe(
      'hello from a replica',
    );
  });
});
