/**
 * Long tools as tasks in the 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`), over plain HTTP as a
 * client declaring the extension sends it (the SDK's v2 client has no tasks support yet): a video extraction and an
 * agent run answer a task handle at once; `tasks/get` polls them (from another replica too) until they complete
 * with the tool's result, the same record `get_prediction` / `get_execution` read; a client without the extension
 * gets the waiting call; cancelling an execution or extraction task cancels the run (the task reads `cancelled`,
 * the record `failed`, nothing billed); another caller cannot read the task.
 */
import { makeVideo } from '../../helpers/media-clips';
import { renderReceiptImage } from '../../helpers/media-fixtures';
import { startReplicas, type Replicas } from '../../helpers/replicas';
import { call, type TestApp } from '../../helpers/test-app';

jest.setTimeout(180_000);

const MODERN = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';

interface Rpc {
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

/** One modern request with the envelope (and the tasks extension declared unless `tasks` is false). */
async function modern(
  url: string,
  key: string,
  method: string,
  params: Record<string, unknown>,
  tasks = true,
): Promise<Rpc> {
  const headers: Record<string, string> = {
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
  };
  const name = params.name ?? params.taskId;
  if (typeof name === 'string') headers['mcp-name'] = name;
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'raw-tasks', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { [TASKS]: {} } } : {},
  };
  const res = await call(`${url}/mcp`, {
    key,
    headers,
    json: { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } },
  });
  const text = await res.text();
  const data = text.split('\n').find((line) => line.startsWith('data: '));
  return JSON.parse(data ? data.slice(6) : text) as Rpc;
}

describe('MCP tasks (2026-07-28 tasks extension)', () => {
  let replicas: Replicas;
  let a: TestApp;
  let b: TestApp;
  let key: string;

  beforeAll(async () => {
    replicas = await startReplicas(2, {});
    [a, b] = replicas.apps as [TestApp, TestApp];
    key = await a.createKey('mcp-tasks', 'pro');
    await a.container.services.accounts.addCredits('mcp-tasks', 5);
  });
  afterAll(async () => {
    await replicas.close();
  });

  /** Polls tasks/get, alternating replicas, until the task leaves `working`. */
  const settle = async (taskId: string): Promise<Record<string, unknown>> => {
    for (let i = 0; i < 600; i += 1) {
      const got = await modern(i % 2 === 0 ? b.url : a.url, key, 'tasks/get', { taskId });
      expect(got.error).toBeUndefined();
      if (got.result?.status !== 'working') return got.result ?? {};
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`task ${taskId} did not settle`);
  };

  it('runs a video extraction as a task: a handle at once, tasks/get from either replica, the result inline', async () => {
    const video = await makeVideo([
      { durationS: 1, color: 'white', text: ['INVOICE 4471'] },
      { durationS: 1, color: 'white', text: ['TOTAL 12.50'] },
    ]);
    const started = await modern(a.url, key, 'tools/call', {
      name: 'extract_video',
      arguments: {
        data: video.toString('base64'),
        json_schema: { type: 'object', properties: { text: { type: ['string', 'null'] } } },
      },
    });
    expect(started.error).toBeUndefined();
    const handle = started.result ?? {};
    expect(handle).toMatchObject({
      resultType: 'task',
      status: 'working',
      pollIntervalMs: expect.any(Number) as number,
    });
    expect(String(handle.taskId)).toMatch(/^prediction:/);
    const done = await settle(String(handle.taskId));
    expect(done.status).toBe('completed');
    const result = done.result as { structuredContent: Record<string, unknown>; content: unknown[] };
    expect(result.structuredContent.status).toBe('completed');
    // The task is the prediction: get_prediction (2025 era, REST shape) reads the same record.
    const id = String(handle.taskId).slice('prediction:'.length);
    const rest = (await (await call(`${b.url}/v1/predictions/${id}`, { key })).json()) as Record<string, unknown>;
    expect(rest.id).toBe(result.structuredContent.id);
    expect(rest.status).toBe('completed');
    // Another organisation cannot read it.
    const other = await a.createKey('mcp-tasks-other', 'pro');
    const foreign = await modern(a.url, other, 'tasks/get', { taskId: handle.taskId });
    expect(foreign.error?.code).toBe(-32602);
    // A finished extraction cannot be cancelled: said plainly.
    const cancel = await modern(a.url, key, 'tasks/cancel', { taskId: handle.taskId });
    expect(cancel.error?.message).toMatch(/already ended \(completed\)/);
  });

  it('cancels an extraction task: the prediction ends failed saying so, billed nothing, and its task is cancelled', async () => {
    const video = await makeVideo(
      Array.from({ length: 8 }, (_, i) => ({ durationS: 1, color: 'white', text: [`PAGE ${i + 1} OF 8`] })),
    );
    const { balanceUsd: before } = await a.container.services.accounts.balance('mcp-tasks');
    const started = await modern(a.url, key, 'tools/call', {
      name: 'extract_video',
      arguments: {
        data: video.toString('base64'),
        json_schema: { type: 'object', properties: { text: { type: ['string', 'null'] } } },
      },
    });
    expect(started.error).toBeUndefined();
    const taskId = String(started.result?.taskId);
    expect(taskId).toMatch(/^prediction:/);
    // Sent to the replica running it (a queued prediction is failed at once from any replica; one running on
    // another replica hears the cancel over Redis, the signal bus).
    const cancelled = await modern(a.url, key, 'tasks/cancel', { taskId });
    expect(cancelled.error).toBeUndefined();
    const done = await settle(taskId);
    expect(done.status).toBe('cancelled');
    const prediction = (done.result as { structuredContent: Record<string, unknown> }).structuredContent;
    expect(prediction).toMatchObject({ status: 'failed', response: null });
    expect(prediction.usage).toMatchObject({ credits_used: 0, message: expect.stringMatching(/cancelled/) as string });
    const id = taskId.slice('prediction:'.length);
    const rest = (await (await call(`${a.url}/v1/predictions/${id}`, { key })).json()) as Record<string, unknown>;
    expect(rest.status).toBe('failed');
    expect((await a.container.services.accounts.balance('mcp-tasks')).balanceUsd).toBe(before);
    const again = await modern(a.url, key, 'tasks/cancel', { taskId });
    expect(again.error?.message).toMatch(/already ended \(failed\)/);
  });

  it('runs an agent as a task, and a client without the extension gets the waiting call', async () => {
    const receipt = `data:image/png;base64,${renderReceiptImage().toString('base64')}`;
    const args = {
      inputs: { receipt },
      config: {
        prompt: 'Extract the receipt fields',
        json_schema: { type: 'object', properties: { company: { type: ['string', 'null'] } } },
      },
    };
    const started = await modern(a.url, key, 'tools/call', { name: 'execute_agent', arguments: args });
    expect(started.result).toMatchObject({ resultType: 'task', status: 'working' });
    const taskId = String(started.result?.taskId);
    expect(taskId).toMatch(/^execution:/);
    const done = await settle(taskId);
    expect(done.status).toBe('completed');
    const execution = (done.result as { structuredContent: Record<string, unknown> }).structuredContent;
    expect(execution.status).toBe('completed');
    const read = await call(`${a.url}/v1/agent/executions/${String(execution.id)}`, { key });
    expect(((await read.json()) as { id: string }).id).toBe(execution.id);
    // Without the extension the same call waits and answers the execution itself.
    const waited = await modern(b.url, key, 'tools/call', { name: 'execute_agent', arguments: args }, false);
    expect(waited.result?.resultType).toBe('complete');
    expect((waited.result?.structuredContent as { status: string }).status).toBe('completed');
  });

  it('cancels an agent task: the run ends cancelled, and an unknown task is -32602', async () => {
    const receipt = `data:image/png;base64,${renderReceiptImage().toString('base64')}`;
    const started = await modern(a.url, key, 'tools/call', {
      name: 'run_skill',
      arguments: { skill: 'receipt', urls: [receipt] },
    });
    const taskId = String(started.result?.taskId);
    // Sent to the replica running it: a run on another replica hears a cancel over Redis (the signal bus).
    const cancelled = await modern(a.url, key, 'tasks/cancel', { taskId });
    expect(cancelled.error).toBeUndefined();
    const done = await settle(taskId);
    expect(done.status).toBe('cancelled');
    const execution = (done.result as { structuredContent: Record<string, unknown> }).structuredContent;
    expect(execution.status).toBe('failed');
    expect(JSON.stringify(execution)).toMatch(/was cancelled/);
    // A finished task cannot be cancelled again; an unknown one is -32602.
    const again = await modern(b.url, key, 'tasks/cancel', { taskId });
    expect(again.error?.message).toMatch(/already ended/);
    const unknown = await modern(a.url, key, 'tasks/get', { taskId: 'execution:nope' });
    expect(unknown.error?.code).toBe(-32602);
  });
});
