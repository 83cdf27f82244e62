/**
 * Long tools as tasks for 2025-11-25 clients (the revision's experimental tasks, src/mcp/mcp-legacy-tasks.ts), with
 * the v1 SDK's own client and its `client.experimental.tasks` API against two replicas of the real app on one data
 * folder, over Streamable HTTP: the long tools are listed `taskSupport: "optional"`; a video extraction called as a
 * task is polled to completion and its result fetched, from the other replica too (tasks/get, tasks/result,
 * tasks/list) and after a restart; `tasks/result` on a running task tells of its status change, and waits on a run
 * paused for a person (`input_required`) until it is answered elsewhere; cancelling a task cancels its run; a task
 * of another organisation is not found; a client that does not ask for a task gets the plain result, and a tool
 * that is not a long one cannot be called as a task.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpError } from '@modelcontextprotocol/sdk/types.js';
import {
  CallToolResultSchema,
  TaskStatusNotificationSchema,
  type CallToolResult,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { makeSpeechLike, makeVideo } from '../../helpers/media-clips';
import { renderReceiptImage } from '../../helpers/media-fixtures';
import { startReplicas, type Replicas } from '../../helpers/replicas';
import { call, startTestApp, type TestApp } from '../../helpers/test-app';

jest.setTimeout(180_000);

const SCHEMA = { type: 'object', properties: { text: { type: ['string', 'null'] } } };

/** A v1 client that advertises the tasks capability, with the tool list read (so it knows the task tools). */
async function tasksClient(baseUrl: string, key: string): Promise<Client> {
  const client = new Client(
    { name: 'legacy-tasks', version: '1.0.0' },
    { capabilities: { tasks: { list: {}, cancel: {} } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  await client.listTools();
  return client;
}

/** Starts `name` as a task through callToolStream and answers its task (the stream is left to the caller). */
async function startTask(client: Client, name: string, args: Record<string, unknown>) {
  const stream = client.experimental.tasks.callToolStream({ name, arguments: args });
  const first = await stream.next();
  if (first.done || first.value.type !== 'taskCreated') throw new Error(`no task: ${JSON.stringify(first.value)}`);
  return { task: first.value.task, stream };
}

async function videoOf(pages: number): Promise<string> {
  const video = await makeVideo(
    Array.from({ length: pages }, (_, i) => ({ durationS: 1, color: 'white', text: [`PAGE ${i + 1} OF ${pages}`] })),
  );
  return video.toString('base64');
}

async function rejection(promise: Promise<unknown>): Promise<McpError> {
  try {
    await promise;
  } catch (error) {
    return error as McpError;
  }
  throw new Error('expected a refusal');
}

describe('MCP tasks (2025-11-25 experimental tasks, v1 SDK client)', () => {
  let replicas: Replicas;
  let a: TestApp;
  let b: TestApp;
  let key: string;
  let onA: Client;
  let onB: Client;

  beforeAll(async () => {
    replicas = await startReplicas(2, {});
    [a, b] = replicas.apps as [TestApp, TestApp];
    key = await a.createKey('legacy-tasks', 'pro');
    await a.container.services.accounts.addCredits('legacy-tasks', 5);
    onA = await tasksClient(a.url, key);
    onB = await tasksClient(b.url, key);
  });
  afterAll(async () => {
    await Promise.allSettled([onA.close(), onB.close()]);
    await replicas.close();
  });

  it('says which tools may be tasks, and that it serves tasks for tools/call', async () => {
    expect(onA.getServerCapabilities()?.tasks).toMatchObject({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const { tools } = await onA.listTools();
    const optional = tools.filter((t) => t.execution?.taskSupport === 'optional').map((t) => t.name);
    expect(optional.sort()).toEqual([
      'execute_agent',
      'extract_audio',
      'extract_document',
      'extract_video',
      'run_skill',
    ]);
  });

  it('runs a video extraction as a task, polled to completion; the other replica reads it; another org cannot', async () => {
    const { task, stream } = await startTask(onA, 'extract_video', { data: await videoOf(2), json_schema: SCHEMA });
    expect(task).toMatchObject({ status: 'working', pollInterval: expect.any(Number) as number });
    expect(task.taskId).toMatch(/^prediction:/);
    const seen: string[] = [];
    let result: CallToolResult | undefined;
    for await (const message of stream) {
      if (message.type === 'taskStatus') seen.push(message.task.status);
      if (message.type === 'result') result = message.result as CallToolResult;
      if (message.type === 'error') throw message.error;
    }
    expect(seen.at(-1)).toBe('completed');
    const prediction = result?.structuredContent as Record<string, unknown>;
    expect(prediction).toMatchObject({ status: 'completed' });
    expect(`prediction:${String(prediction.id)}`).toBe(task.taskId);

    // The task is the prediction: the other replica reads it, its result, and lists it; REST reads the record.
    expect(await onB.experimental.tasks.getTask(task.taskId)).toMatchObject({
      taskId: task.taskId,
      status: 'completed',
    });
    const fetched = await onB.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(fetched.structuredContent).toEqual(prediction);
    const listed = await onB.experimental.tasks.listTasks();
    expect(listed.tasks.map((t: Task) => t.taskId)).toContain(task.taskId);
    const rest = await call(`${b.url}/v1/predictions/${String(prediction.id)}`, { key });
    expect(((await rest.json()) as { status: string }).status).toBe('completed');
    // And a 2026-07-28 client reads the same task (the tasks extension, mcp-tasks.ts).
    const modern = await call(`${b.url}/mcp`, {
      key,
      headers: {
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tasks/get',
        'mcp-name': task.taskId,
      },
      json: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tasks/get',
        params: {
          taskId: task.taskId,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'modern', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
          },
        },
      },
    });
    const text = await modern.text();
    const line = text.split('\n').find((l) => l.startsWith('data: '));
    expect(JSON.parse(line ? line.slice(6) : text)).toMatchObject({
      result: { taskId: task.taskId, status: 'completed' },
    });

    // Another organisation's client finds no such task.
    const other = await tasksClient(a.url, await a.createKey('legacy-tasks-other', 'pro'));
    try {
      expect((await rejection(other.experimental.tasks.getTask(task.taskId))).code).toBe(-32602);
      expect((await rejection(other.experimental.tasks.getTaskResult(task.taskId))).code).toBe(-32602);
      expect((await other.experimental.tasks.listTasks()).tasks.map((t: Task) => t.taskId)).not.toContain(task.taskId);
      expect((await rejection(other.experimental.tasks.cancelTask(task.taskId))).code).toBe(-32602);
    } finally {
      await other.close();
    }
    // A finished task cannot be cancelled.
    const late = await rejection(onA.experimental.tasks.cancelTask(task.taskId));
    expect(late.message).toMatch(/terminal status: completed/);
  });

  it('tasks/result waits for a running task and tells of its status change on its stream', async () => {
    const statuses: string[] = [];
    onB.setNotificationHandler(TaskStatusNotificationSchema, (note) => void statuses.push(note.params.status));
    const { task } = await startTask(onA, 'extract_video', { data: await videoOf(3), json_schema: SCHEMA });
    // Fetched at once from the other replica: the answer waits for the run to end there.
    const result = await onB.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect((result.structuredContent as { status: string }).status).toBe('completed');
    expect(result._meta?.['io.modelcontextprotocol/related-task']).toEqual({ taskId: task.taskId });
    expect(statuses).toEqual(['completed']);
  });

  it('cancels an extraction task: the prediction ends failed saying so, billed nothing, the task cancelled', async () => {
    const { balanceUsd: before } = await a.container.services.accounts.balance('legacy-tasks');
    const { task } = await startTask(onA, 'extract_video', { data: await videoOf(8), json_schema: SCHEMA });
    const cancelled = await onA.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
    expect(await onB.experimental.tasks.getTask(task.taskId)).toMatchObject({ status: 'cancelled' });
    const result = await onB.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ status: 'failed', response: null });
    expect((result.structuredContent as { usage: unknown }).usage).toMatchObject({ credits_used: 0 });
    expect((await a.container.services.accounts.balance('legacy-tasks')).balanceUsd).toBe(before);
  });

  it('runs an agent as a task and cancels a skill run as one', async () => {
    const receipt = `data:image/png;base64,${renderReceiptImage().toString('base64')}`;
    const { task, stream } = await startTask(onA, 'execute_agent', {
      inputs: { receipt },
      config: { prompt: 'Extract the receipt fields', json_schema: SCHEMA },
    });
    expect(task.taskId).toMatch(/^execution:/);
    let result: CallToolResult | undefined;
    for await (const message of stream) {
      if (message.type === 'result') result = message.result as CallToolResult;
      if (message.type === 'error') throw message.error;
    }
    expect(result?.structuredContent).toMatchObject({ status: 'completed' });

    const skill = await startTask(onA, 'run_skill', { skill: 'receipt', urls: [receipt] });
    expect(await onA.experimental.tasks.cancelTask(skill.task.taskId)).toMatchObject({ status: 'cancelled' });
    const ended = await onB.experimental.tasks.getTaskResult(skill.task.taskId, CallToolResultSchema);
    expect(JSON.stringify(ended.structuredContent)).toMatch(/was cancelled/);
  });

  it('a run paused for a person is input_required; tasks/result waits while it is answered elsewhere', async () => {
    const receipt = `data:image/png;base64,${renderReceiptImage().toString('base64')}`;
    const { task } = await startTask(onA, 'execute_agent', {
      inputs: { receipt },
      config: { prompt: 'Extract the receipt fields', json_schema: SCHEMA, require_approval: ['ocr_image'] },
    });
    let paused: Task | undefined;
    for (let i = 0; i < 600 && paused?.status !== 'input_required'; i += 1) {
      paused = await onB.experimental.tasks.getTask(task.taskId);
      if (paused.status !== 'input_required') await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(paused).toMatchObject({ status: 'input_required', statusMessage: expect.any(String) as string });
    const statuses: string[] = [];
    onB.setNotificationHandler(TaskStatusNotificationSchema, (note) => void statuses.push(note.params.status));
    const waiting = onB.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    // The person answers through REST on the other replica (a 2025 client would call resume_execution).
    const id = task.taskId.slice('execution:'.length);
    const resumed = await call(`${a.url}/v1/agent/executions/${id}/resume`, { key, json: { action: 'approve' } });
    expect(resumed.status).toBe(200);
    const result = await waiting;
    expect(result.structuredContent).toMatchObject({ status: 'completed' });
    expect(statuses.at(-1)).toBe('completed');
  });

  it('answers a client that asks for no task as today, and refuses a task of a tool that is not a long one', async () => {
    const plain = await onA.callTool({
      name: 'extract_video',
      arguments: { data: await videoOf(1), json_schema: SCHEMA },
    });
    expect(plain.isError).toBeFalsy();
    expect(plain.structuredContent).toMatchObject({ status: 'completed' });
    expect(plain.task).toBeUndefined();

    const stream = onA.experimental.tasks.callToolStream({ name: 'list_hub_domains', arguments: {} }, undefined, {
      task: {},
    });
    const codeOf = async (messages: AsyncIterable<{ type: string; error?: McpError }>) => {
      for await (const message of messages) if (message.type === 'error') return message.error?.code;
      return undefined;
    };
    expect(await codeOf(stream)).toBe(-32601);
    // Arguments the tool refuses: no run is stored, so no task; the tool's words as -32602.
    const invalid = onA.experimental.tasks.callToolStream({ name: 'extract_video', arguments: { data: 7 } });
    expect(await codeOf(invalid)).toBe(-32602);
    expect((await rejection(onA.experimental.tasks.getTask('prediction:nope'))).code).toBe(-32602);
  });

  it('reads a task after the replica that ran it restarted', async () => {
    const audio = (await makeSpeechLike(2, [[0.2, 1.6]])).toString('base64');
    const { task, stream } = await startTask(onA, 'extract_audio', { data: audio, json_schema: SCHEMA });
    for await (const message of stream) if (message.type === 'error') throw message.error;
    await onA.close();
    await a.stop();
    // A new process on the same data folder (the replicas' close stops it).
    a = await startTestApp({}, replicas.dataDir);
    replicas.apps[0] = a;
    onA = await tasksClient(a.url, key);
    expect(await onA.experimental.tasks.getTask(task.taskId)).toMatchObject({ status: 'completed' });
    const result = await onA.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(`prediction:${String((result.structuredContent as { id: string }).id)}`).toBe(task.taskId);
  });
});
