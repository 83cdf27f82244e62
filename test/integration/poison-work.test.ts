/**
 * Poison work does not come back: an execution that was running when the server stopped is resumed once
 * after the restart; if it is still running when the server stops again, the next start fails it with a clear
 * message instead of resuming it into the same hang (the planner is not called again).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { interruptAgentRun } from '../helpers/interrupted-run';
import { startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, startTestApp, type TestApp } from '../helpers/test-app';

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
    const { env, dataDir, key, executionId } = await interruptAgentRun(upstream, dir, {
      org: 'poison-org',
      then: [{ kind: 'hang' }],
    });

    // Second start: resumed from its checkpoint (one more planning call), and it hangs again.
    const second = await startTestApp(env, dataDir);
    await until(async () => (upstream.requests.length >= 3 ? true : null), 'the resumed run to hang');
    await second.stop();

    // Third start: not resumed. The planner is not called again; the run is failed with the reason.
    let third: TestApp | null = await startTestApp(env, dataDir);
    try {
      const done = await until(async () => {
        const got = (await (
          await call(`${third?.url}/v1/agent/executions/${executionId}`, { key })
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
