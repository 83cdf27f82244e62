/**
 * A worker that stalls while another takes its job over finishes nothing. Here, on the in-process queue: a server
 * hangs on a batch prediction's upstream call, a second server starts on the same data folder and takes the
 * `running` record over (its restart sweep, as a supervisor replacing a hung process would), and the first server's
 * late answer is refused by the claim in the finishing compare-and-set: the record ends with the second run's result,
 * announced once. An agent execution the same way, from its checkpoint: the late worker's finish is refused, so it
 * debits nothing, and the wallet is debited once, exactly the cost the finished record shows. The same on BullMQ
 * with a replica stopped past its lease is in multi-replica.test.ts, so these apps keep the in-process queue
 * whatever PRISM_TEST_BACKEND says (records follow it).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger, type Logger } from '../../src/lib/logger';
import { renderReceiptImage } from '../helpers/media-fixtures';
import { startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, startTestApp, type TestApp } from '../helpers/test-app';
import { CHAT_PLANNER, writeLabModelsFile } from '../helpers/upstream-app';

interface PredictionWire {
  id: string;
  status: string;
  response: unknown;
}

function collectingLogger(): { logger: Logger; messages: string[] } {
  const messages: string[] = [];
  const logger = createLogger('warn', (line) => void messages.push((JSON.parse(line) as { message: string }).message));
  return { logger, messages };
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1200; i += 1) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`never happened: ${what}`);
}

const TAKEN_OVER = 'a run taken over by another worker finished late; its outcome is dropped';

describe('a stalled worker whose job was taken over', () => {
  let upstream: ScriptedUpstream;
  let dir: string;
  const apps: TestApp[] = [];

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-stale-'));
  });
  afterAll(async () => {
    for (const app of apps.slice(0, -1)) await app.stop();
    await apps.at(-1)?.close();
    await upstream.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('finishes late without touching the record the new worker owns', async () => {
    const env = {
      PRISM_REDIS_URL: '',
      PRISM_MODELS_FILE: writeLabModelsFile(dir, upstream.baseUrl, [
        {
          id: 'lab-vl',
          upstreamModel: 'qwen-vl',
          capabilities: { supported_input_types: ['text', 'image'], json_schema: true, max_images: 4 },
          parameters: ['max_tokens', 'temperature', 'response_format'],
        },
      ]),
    };
    const stale = gate();
    const fresh = gate();
    upstream.next(
      { kind: 'reply', content: '{"total": 1}', waitFor: stale.promise },
      { kind: 'reply', content: '{"total": 2}', waitFor: fresh.promise },
    );
    const firstLogs = collectingLogger();
    const first = await startTestApp(env, undefined, { logger: firstLogs.logger });
    apps.push(first);
    const key = await first.createKey('stale-org', 'pro');
    await first.container.services.accounts.addCredits('stale-org', 1);
    const res = await call(`${first.url}/v1/image/generate`, {
      key,
      json: {
        model: 'lab-vl',
        batch: true,
        images: [`data:image/png;base64,${renderReceiptImage().toString('base64')}`],
        config: { json_schema: { type: 'object', properties: { total: { type: 'number' } } } },
      },
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as PredictionWire;
    await until('the first worker calls the model', () => upstream.requests.length === 1);

    // The second server takes the running record over and calls the model again (its call waits too).
    const second = await startTestApp(env, first.dataDir);
    apps.push(second);
    await until('the second worker calls the model', () => upstream.requests.length === 2);
    const get = async (): Promise<PredictionWire> =>
      (await (await call(`${second.url}/v1/predictions/${id}`, { key })).json()) as PredictionWire;

    // The stalled worker gets its answer now: its finish is refused, and it says why.
    stale.open();
    await first.container.jobs.idle();
    expect(firstLogs.messages).toContain(TAKEN_OVER);
    expect(await get()).toMatchObject({ status: 'running', response: null });

    fresh.open();
    await second.container.jobs.idle();
    expect(await get()).toMatchObject({ status: 'completed', response: { total: 2 } });
    expect(upstream.requests).toHaveLength(2);
  });

  it('an agent run taken over from its checkpoint is billed once, by the worker whose finish is accepted', async () => {
    const runDir = fs.mkdtempSync(path.join(dir, 'agent-'));
    const env = {
      PRISM_REDIS_URL: '',
      PRISM_MODELS_FILE: writeLabModelsFile(runDir, upstream.baseUrl, [CHAT_PLANNER]),
    };
    const stale = gate();
    const fresh = gate();
    const seen = upstream.requests.length;
    upstream.next(
      // The first worker's first step is saved (a tool round), then its next planner call hangs.
      {
        kind: 'reply',
        toolCalls: [{ id: 'c1', name: 'list_skills', arguments: '{}' }],
        usage: { prompt_tokens: 1000, completion_tokens: 100 },
      },
      {
        kind: 'reply',
        content: '{"answer": "late"}',
        usage: { prompt_tokens: 2000, completion_tokens: 200 },
        waitFor: stale.promise,
      },
      // The worker that takes the run over plans that step again from the checkpoint.
      {
        kind: 'reply',
        content: '{"answer": "fresh"}',
        usage: { prompt_tokens: 3000, completion_tokens: 300 },
        waitFor: fresh.promise,
      },
    );
    const firstLogs = collectingLogger();
    const first = await startTestApp(env, undefined, { logger: firstLogs.logger });
    apps.push(first);
    const key = await first.createKey('stale-agent-org', 'pro');
    await first.container.services.accounts.addCredits('stale-agent-org', 1);
    const balance = async (app: TestApp): Promise<number> =>
      Math.round((await app.container.services.accounts.balance('stale-agent-org')).balanceUsd * 1e6);
    const before = await balance(first);
    const res = await call(`${first.url}/v1/agent/execute`, {
      key,
      json: {
        model: 'prism-orion-1',
        batch: true,
        prompt: 'Answer.',
        json_schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] },
      },
    });
    expect(res.status).toBeLessThan(300);
    const { id } = (await res.json()) as { id: string };
    await until('the first worker plans its second step', () => upstream.requests.length === seen + 2);

    const second = await startTestApp(env, first.dataDir);
    apps.push(second);
    await until('the second worker plans from the checkpoint', () => upstream.requests.length === seen + 3);
    type Run = { status: string; response: unknown; usage: { cost_dollars: number } };
    const get = async (): Promise<Run> =>
      (await (await call(`${second.url}/v1/agent/executions/${id}`, { key })).json()) as Run;

    stale.open();
    await first.container.jobs.idle();
    expect(firstLogs.messages).toContain(TAKEN_OVER);
    expect((await get()).status).toBe('running');
    expect(await balance(second)).toBe(before);

    fresh.open();
    await second.container.jobs.idle();
    const done = await get();
    expect(done).toMatchObject({ status: 'completed', response: { answer: 'fresh' } });
    expect(done.usage.cost_dollars).toBeGreaterThan(0);
    expect(before - (await balance(second))).toBe(Math.round(done.usage.cost_dollars * 1e6));
  });
});
