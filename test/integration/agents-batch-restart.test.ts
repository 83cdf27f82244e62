/**
 * Batch executions and restarts: `batch: true` answers at once (`enqueued`), runs through the job queue and sends
 * the signed callback; a run stopped mid-way by a shutdown stays `running` with its LangGraph checkpoint in SQLite,
 * and the next start resumes it from that checkpoint (the model sees the earlier tool result, not a fresh task).
 */
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startCallbackReceiver } from '../helpers/callback-receiver';
import { renderReceiptImage } from '../helpers/media-fixtures';
import { interruptAgentRun } from '../helpers/interrupted-run';
import { startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, startTestApp } from '../helpers/test-app';

interface ExecutionWire {
  id: string;
  status: string;
  response: Record<string, unknown> | null;
  usage: Record<string, unknown>;
}

async function until<T>(probe: () => Promise<T | null>, what: string): Promise<T> {
  for (let i = 0; i < 400; i += 1) {
    const value = await probe();
    if (value !== null) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('batch executions', () => {
  it('return enqueued at once, complete through the queue and call back signed', async () => {
    const app = await startTestApp({ PRISM_ALLOW_PRIVATE_URLS: '1', PRISM_WEBHOOK_SECRET: 'agent-hook-secret-123' });
    const receiver = await startCallbackReceiver();
    const { received } = receiver;
    try {
      const key = await app.createKey('batch-org');
      await app.container.services.accounts.addCredits('batch-org', 1);
      const png = renderReceiptImage();
      const res = await call(`${app.url}/v1/agent/execute`, {
        key,
        json: {
          batch: true,
          callback_url: receiver.url,
          inputs: { receipt: `data:image/png;base64,${png.toString('base64')}` },
          config: { json_schema: { type: 'object', properties: { total: { type: ['string', 'number', 'null'] } } } },
        },
      });
      const queued = (await res.json()) as ExecutionWire;
      expect(queued.status).toBe('enqueued');
      expect(queued.response).toBeNull();
      await app.container.jobs.idle();
      await app.container.executionWebhooks.idle();
      expect(received).toHaveLength(1);
      const delivered = JSON.parse(received[0]?.body ?? '{}') as ExecutionWire;
      expect(delivered).toMatchObject({ id: queued.id, status: 'completed' });
      expect(String(delivered.response?.total)).toContain('26.22');
      expect(received[0]?.event).toBe('execution.completed');
      const expected = `sha256=${createHmac('sha256', 'agent-hook-secret-123')
        .update(received[0]?.body ?? '')
        .digest('hex')}`;
      expect(received[0]?.signature).toBe(expected);
      const got = (await (await call(`${app.url}/v1/agent/executions/${queued.id}`, { key })).json()) as ExecutionWire;
      expect(got.status).toBe('completed');
      const bad = await call(`${app.url}/v1/agent/execute`, {
        key,
        json: { batch: true, callback_url: 'ftp://x', inputs: {}, config: { json_schema: { type: 'object' } } },
      });
      expect(bad.status).toBe(400);
    } finally {
      await receiver.close();
      await app.close();
    }
  });
});

describe('a restart in the middle of a run', () => {
  let upstream: ScriptedUpstream;
  let dir: string;

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-agents-restart-'));
  });
  afterAll(async () => {
    await upstream.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('resumes the run from its last checkpoint', async () => {
    const { env, dataDir, key, executionId } = await interruptAgentRun(upstream, dir, {
      org: 'restart-org',
      more: { total_timeout_s: 60 },
    });
    upstream.next({ kind: 'reply', content: '{"total": "26.22"}', usage: { prompt_tokens: 10, completion_tokens: 5 } });
    const second = await startTestApp(env, dataDir);
    try {
      const done = await until(async () => {
        const got = (await (
          await call(`${second.url}/v1/agent/executions/${executionId}`, { key })
        ).json()) as ExecutionWire;
        return got.status === 'completed' || got.status === 'failed' ? got : null;
      }, 'the resumed run');
      expect(done.status).toBe('completed');
      expect(done.response).toEqual({ total: '26.22' });
      const last = upstream.requests.at(-1)?.body as { messages: { role: string; content: string }[] };
      expect(last.messages.some((m) => m.role === 'tool' && m.content.includes('GREENLEAF'))).toBe(true);
      // Three planning calls in all: the OCR step was not planned or run again after the restart.
      expect(upstream.requests).toHaveLength(3);
      expect(done.usage.steps).toBe(3);
    } finally {
      await second.close();
    }
  });
});
