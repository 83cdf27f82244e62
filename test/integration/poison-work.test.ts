/**
 * Poison work does not come back: an execution that was running when the server stopped is resumed once
 * after the restart; if it is still running when the server stops again, the next start fails it with a clear
 * message instead of resuming it into the same hang (the planner is not called again).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { renderReceiptImage } from '../helpers/media-fixtures';
import { startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, startTestApp, uploadFile, type TestApp } from '../helpers/test-app';
import { writeLabModelsFile } from '../helpers/upstream-app';

interface ExecutionWire {
  id: string;
  status: string;
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

describe('an execution that keeps hanging across restarts', () => {
  let upstream: ScriptedUpstream;
  let dir: string;

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-poison-'));
  });
  afterAll(async () => {
    await upstream.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is resumed once, then failed with a message on the next start', async () => {
    const modelsFile = writeLabModelsFile(dir, upstream.baseUrl, [
      { id: 'prism-orion-1', upstreamModel: 'planner-llm', pricing: { prompt: 1.0, completion: 1.0 } },
    ]);
    const env = { PRISM_MODELS_FILE: modelsFile, PRISM_SHUTDOWN_GRACE_S: '1' };
    const first = await startTestApp(env);
    const key = await first.createKey('poison-org');
    await first.container.services.accounts.addCredits('poison-org', 1);
    const upload = await uploadFile(first.url, key, renderReceiptImage(), { filename: 'r.png' });
    const fileId = ((await upload.json()) as { id: string }).id;
    upstream.next(
      {
        kind: 'reply',
        toolCalls: [{ id: 'call_1', name: 'ocr_image', arguments: JSON.stringify({ image: fileId }) }],
        usage: { prompt_tokens: 10, completion_tokens: 10 },
      },
      { kind: 'hang' },
      { kind: 'hang' },
    );
    const queued = (await (
      await call(`${first.url}/v1/agent/execute`, {
        key,
        json: { batch: true, inputs: { r: { type: 'input_file', file_id: fileId } }, config: { prompt: 'Read it' } },
      })
    ).json()) as ExecutionWire;
    await until(async () => (upstream.requests.length >= 2 ? true : null), 'the first hang');
    await first.stop();

    // Second start: resumed from its checkpoint (one more planning call), and it hangs again.
    const second = await startTestApp(env, first.dataDir);
    await until(async () => (upstream.requests.length >= 3 ? true : null), 'the resumed run to hang');
    await second.stop();

    // Third start: not resumed. The planner is not called again; the run is failed with the reason.
    let third: TestApp | null = await startTestApp(env, first.dataDir);
    try {
      const done = await until(async () => {
        const got = (await (
          await call(`${third?.url}/v1/agent/executions/${queued.id}`, { key })
        ).json()) as ExecutionWire;
        return got.status === 'completed' || got.status === 'failed' ? got : null;
      }, 'the given-up run');
      expect(done.status).toBe('failed');
      expect(String(done.usage.message)).toMatch(/running when the server stopped 2 times and is not resumed again/);
      await third.container.jobs.idle();
      expect(upstream.requests).toHaveLength(3);
      await third.close();
      third = null;
    } finally {
      await third?.close();
    }
  });
});
