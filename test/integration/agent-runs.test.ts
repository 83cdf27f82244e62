/**
 * Agent runs people can watch and steer (docs/agent-runs.md), through plain HTTP with a scripted planner:
 * a streamed execute sends typed events with ids; a run pauses before a tool that needs approval (the record says
 * what for, the webhook fires); the app restarts while it is paused (same data folder); a client reconnects with
 * Last-Event-ID and gets only what it missed; the run is resumed with edited arguments and completes. A rejected
 * call reaches the planner as the tool's error and the planner answers without it; cancel and expiry end paused runs
 * with a message; other organisations see none of it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startCallbackReceiver } from '../helpers/callback-receiver';
import { craftZip, skillMd } from '../helpers/crafted-zip';
import { renderReceiptImage } from '../helpers/media-fixtures';
import { openRunEvents, type RunEventFrame } from '../helpers/run-events-client';
import { startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, startTestApp, uploadFile, type TestApp } from '../helpers/test-app';
import { writeLabModelsFile } from '../helpers/upstream-app';

jest.setTimeout(120_000);

interface ExecutionWire {
  id: string;
  status: string;
  response: Record<string, unknown> | null;
  usage: Record<string, unknown>;
  steps: { kind: string; name: string; arguments: Record<string, unknown> | null; error: string | null }[];
  pause?: {
    kind: string;
    tool_call: { id: string; name: string; arguments: Record<string, unknown> } | null;
    expires_at: string;
    resume: string[];
  };
}

const PLANNER = {
  id: 'prism-orion-1',
  upstreamModel: 'planner-llm',
  pricing: { prompt: 1.0, completion: 1.0 },
  more: { total_timeout_s: 60 },
};

const ocrCall = (image: string) => ({
  kind: 'reply' as const,
  toolCalls: [{ id: 'call_ocr', name: 'ocr_image', arguments: JSON.stringify({ image }) }],
  usage: { prompt_tokens: 10, completion_tokens: 10 },
});

const types = (events: RunEventFrame[]) => events.map((e) => e.event);

/** The `code` of a 4xx body (`{detail: {error}}`). */
const codeOf = async (res: Response): Promise<string> =>
  ((await res.json()) as { detail: { error: { code: string } } }).detail.error.code;

describe('agent runs: events, pauses, resume', () => {
  let upstream: ScriptedUpstream;
  let dir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-agent-runs-'));
    env = {
      PRISM_MODELS_FILE: writeLabModelsFile(dir, upstream.baseUrl, [PLANNER]),
      PRISM_SHUTDOWN_GRACE_S: '1',
      PRISM_ALLOW_PRIVATE_URLS: '1',
    };
  });
  afterAll(async () => {
    await upstream.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('streams a run that pauses for approval, survives a restart, resumes with edited arguments, completes', async () => {
    const receiver = await startCallbackReceiver();
    const first = await startTestApp(env);
    let second: TestApp | null = null;
    try {
      const key = await first.createKey('runs-org');
      const otherKey = await first.createKey('runs-other');
      await first.container.services.accounts.addCredits('runs-org', 1);
      const balance = async (app: TestApp) =>
        Math.round((await app.container.services.accounts.balance('runs-org')).balanceUsd * 1e6);
      const before = await balance(first);
      const fileId = (
        (await (await uploadFile(first.url, key, renderReceiptImage(), { filename: 'r.png' })).json()) as {
          id: string;
        }
      ).id;
      // The planner asks to read the wrong image: the person corrects the call before it runs.
      upstream.next(ocrCall('img_wrong1'));
      const stream = await openRunEvents(`${first.url}/v1/agent/execute`, key, {
        body: {
          stream: true,
          callback_url: receiver.url,
          inputs: { r: { type: 'input_file', file_id: fileId } },
          config: { prompt: 'Which store issued the receipt?', require_approval: ['ocr_image'] },
        },
      });
      expect(stream.status).toBe(200);
      expect(stream.contentType).toContain('text/event-stream');
      const upToPause = await stream.until((e) => e.event === 'execution.status' && e.data.status === 'paused');
      // The stream stays open while the run waits; this client leaves (it reconnects later, elsewhere).
      stream.close();
      // How far the run got before this stream first read it varies (pending or running); the rest does not.
      expect(upToPause.filter((e) => e.event === 'execution.status').at(-1)?.data.status).toBe('paused');
      expect(types(upToPause).filter((t) => t !== 'execution.status')).toEqual(['execution.plan', 'execution.usage']);
      expect(new Set(upToPause.map((e) => e.id)).size).toBe(upToPause.length);
      const paused = upToPause.at(-1) as RunEventFrame;
      const id = paused.data.execution_id as string;
      expect(paused.data.pause).toMatchObject({
        kind: 'tool_approval',
        tool_call: { name: 'ocr_image', arguments: { image: 'img_wrong1' } },
        resume: ['approve', 'reject', 'edit'],
      });
      expect(upToPause.find((e) => e.event === 'execution.usage')?.data).toMatchObject({
        input_tokens: 10,
        output_tokens: 10,
        steps: 1,
      });

      const record = (await (await call(`${first.url}/v1/agent/executions/${id}`, { key })).json()) as ExecutionWire;
      expect(record).toMatchObject({ status: 'paused', response: null, pause: { kind: 'tool_approval' } });
      // The webhook said it paused.
      await first.container.executionWebhooks.idle();
      expect(receiver.received.map((r) => r.event)).toEqual(['execution.paused']);
      // Other organisations see nothing of it.
      expect((await call(`${first.url}/v1/agent/executions/${id}/events`, { key: otherKey })).status).toBe(404);
      expect(
        (await call(`${first.url}/v1/agent/executions/${id}/resume`, { key: otherKey, json: { action: 'approve' } }))
          .status,
      ).toBe(404);

      // A restart while it waits: the record and the checkpoint are in the data folder.
      await first.stop();
      second = await startTestApp(env, first.dataDir);
      const still = (await (await call(`${second.url}/v1/agent/executions/${id}`, { key })).json()) as ExecutionWire;
      expect(still.status).toBe('paused');

      // A watcher reconnects where it left off; the person edits the call's arguments.
      const watcher = await openRunEvents(`${second.url}/v1/agent/executions/${id}/events`, key, {
        lastEventId: paused.id,
      });
      upstream.next({
        kind: 'reply',
        content: 'GREENLEAF GROCERY LTD issued it.',
        usage: { prompt_tokens: 20, completion_tokens: 5 },
      });
      const edit = await call(`${second.url}/v1/agent/executions/${id}/resume`, {
        key,
        json: { action: 'edit', arguments: { image: fileId } },
      });
      expect(edit.status).toBe(200);
      const done = (await edit.json()) as ExecutionWire;
      expect(done.status).toBe('completed');
      expect(done.response).toEqual({ text: 'GREENLEAF GROCERY LTD issued it.' });
      expect(done.pause).toBeUndefined();
      expect(done.steps.map((s) => s.kind)).toEqual(['plan', 'tool', 'plan']);
      expect(done.steps[1]).toMatchObject({ name: 'ocr_image', arguments: { image: fileId }, error: null });
      // The planner read the edited call's result.
      const last = upstream.requests.at(-1)?.body as { messages: { role: string; content: string }[] };
      expect(last.messages.find((m) => m.role === 'tool')?.content).toContain('GREENLEAF');

      const rest = await watcher.until((e) => e.event === 'execution.done');
      await watcher.ended;
      expect(types(rest)).toEqual([
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
      expect(rest[0]?.data.status).toBe('running');
      expect(rest[1]?.data).toMatchObject({ name: 'ocr_image', arguments: { image: fileId } });
      expect(String(rest[2]?.data.summary)).toContain('GREENLEAF');
      expect(rest[5]?.data.text).toBe('GREENLEAF GROCERY LTD issued it.');
      expect(rest[7]?.data.status).toBe('completed');
      expect((rest[8]?.data.execution as ExecutionWire).id).toBe(id);
      // The whole run was billed once: 30 prompt + 15 completion tokens at $1/M.
      expect(before - (await balance(second))).toBe(45);

      // A client reconnecting after the end gets the closing events it missed, and nothing twice.
      const late = await openRunEvents(`${second.url}/v1/agent/executions/${id}/events`, key, {
        lastEventId: rest[6]?.id,
      });
      expect(types(await late.until((e) => e.event === 'execution.done'))).toEqual([
        'execution.status',
        'execution.done',
      ]);
      // From the start, the stored record replays the run's steps and its end in the order they happened.
      const replay = await openRunEvents(`${second.url}/v1/agent/executions/${id}/events`, key);
      const all = await replay.until((e) => e.event === 'execution.done');
      expect(types(all)).toEqual(['execution.plan', 'execution.usage', ...types(rest).slice(1)]);
      expect(all.slice(2).map((e) => e.data)).toEqual(rest.slice(1).map((e) => e.data));
      await second.container.executionWebhooks.idle();
      expect(receiver.received.map((r) => r.event)).toEqual(['execution.paused', 'execution.completed']);
      expect(
        (await call(`${second.url}/v1/agent/executions/${id}/resume`, { key, json: { action: 'approve' } })).status,
      ).toBe(409);
    } finally {
      await receiver.close();
      if (second) await second.close();
      else await first.close();
    }
  });

  it('a streamed execute sends the answer live as the planner writes it, then the stored whole', async () => {
    const app = await startTestApp(env);
    try {
      const key = await app.createKey('live-org');
      await app.container.services.accounts.addCredits('live-org', 1);
      const pieces = Array.from({ length: 12 }, (_, i) => `piece ${String(i).padStart(2, '0')} of the answer; `);
      upstream.next({ kind: 'stream', chunks: pieces, usage: { prompt_tokens: 5, completion_tokens: 50 } });
      const stream = await openRunEvents(`${app.url}/v1/agent/execute`, key, {
        body: { stream: true, inputs: {}, config: { prompt: 'Say it in pieces' } },
      });
      const events = await stream.until((e) => e.event === 'execution.done');
      const deltas = events.filter((e) => e.event === 'execution.answer.delta');
      // More than one piece, each without an id of its own (live text is not stored, so it cannot be replayed).
      expect(deltas.length).toBeGreaterThan(1);
      const answer = events.find((e) => e.event === 'execution.answer');
      expect(deltas.map((e) => e.data.delta).join('')).toBe(answer?.data.text);
      expect(answer?.data.text).toBe(pieces.join(''));
      // The live text came before the step that answered was saved.
      expect(events.findIndex((e) => e.event === 'execution.answer.delta')).toBeLessThan(
        events.findIndex((e) => e.event === 'execution.plan'),
      );
      const ids = events.filter((e) => e.event !== 'execution.answer.delta').map((e) => e.id);
      expect(new Set(ids).size).toBe(ids.length);
    } finally {
      await app.close();
    }
  });

  it('a rejected call reaches the planner as the reason, and it answers without the tool', async () => {
    const app = await startTestApp(env);
    try {
      const key = await app.createKey('reject-org');
      // Room for one run's hold (24 steps of 8,192 + 1,024 tokens at $1/M is about $0.22), not two.
      await app.container.services.accounts.addCredits('reject-org', 0.3);
      const execute = () =>
        call(`${app.url}/v1/agent/execute`, {
          key,
          json: { inputs: {}, config: { prompt: 'Read the image', require_approval: ['ocr_image'] } },
        });
      upstream.next(ocrCall('img_abc123'));
      const paused = (await (await execute()).json()) as ExecutionWire;
      expect(paused).toMatchObject({ status: 'paused', pause: { tool_call: { name: 'ocr_image' } } });
      // A paused run holds nothing: a second run fits in the wallet (and pauses too; it is cancelled).
      upstream.next(ocrCall('img_abc123'));
      const another = await execute();
      expect(another.status).toBe(200);
      const anotherId = ((await another.json()) as ExecutionWire).id;
      await call(`${app.url}/v1/agent/executions/${anotherId}/cancel`, { key, method: 'POST' });

      const bad = await call(`${app.url}/v1/agent/executions/${paused.id}/resume`, { key, json: { action: 'edit' } });
      expect(bad.status).toBe(422);
      const wrong = await call(`${app.url}/v1/agent/executions/${paused.id}/resume`, {
        key,
        json: { action: 'answer', text: 'hi' },
      });
      expect(wrong.status).toBe(400);
      expect(await codeOf(wrong)).toBe('invalid_decision');

      upstream.next({
        kind: 'reply',
        content: 'I was not allowed to read it.',
        usage: { prompt_tokens: 5, completion_tokens: 5 },
      });
      const seen = upstream.requests.length;
      const done = (await (
        await call(`${app.url}/v1/agent/executions/${paused.id}/resume`, {
          key,
          json: { action: 'reject', reason: 'that image is private' },
        })
      ).json()) as ExecutionWire;
      expect(done.status).toBe('completed');
      expect(done.response).toEqual({ text: 'I was not allowed to read it.' });
      expect(done.steps[1]).toMatchObject({ kind: 'tool', name: 'ocr_image' });
      expect(done.steps[1]?.error).toContain('private');
      const asked = upstream.requests[seen]?.body as { messages: { role: string; content: string }[] };
      expect(asked.messages.find((m) => m.role === 'tool')?.content).toContain(
        'A person rejected this call: that image is private',
      );
    } finally {
      await app.close();
    }
  });

  it('cancel and expiry end paused runs with a message', async () => {
    const app = await startTestApp(env);
    try {
      const key = await app.createKey('cancel-org');
      await app.container.services.accounts.addCredits('cancel-org', 1);
      const pausedRun = async (): Promise<ExecutionWire> => {
        upstream.next(ocrCall('img_abc123'));
        const res = await call(`${app.url}/v1/agent/execute`, {
          key,
          json: { inputs: {}, config: { prompt: 'Read it', require_approval: ['ocr_image'] } },
        });
        return (await res.json()) as ExecutionWire;
      };
      const balance = async () =>
        Math.round((await app.container.services.accounts.balance('cancel-org')).balanceUsd * 1e6);
      const one = await pausedRun();
      expect(one.status).toBe('paused');
      const before = await balance();
      const cancelled = (await (
        await call(`${app.url}/v1/agent/executions/${one.id}/cancel`, { key, method: 'POST' })
      ).json()) as ExecutionWire & { usage: { message: string; cost_dollars: number; steps: number } };
      expect(cancelled.status).toBe('failed');
      expect(cancelled.usage.message).toContain('cancelled');
      // Billed for the planner round it used before it paused (10 + 10 tokens at $1/M), as the record says.
      expect(cancelled.usage).toMatchObject({ steps: 1, cost_dollars: 0.00002 });
      expect(before - (await balance())).toBe(20);
      expect((await call(`${app.url}/v1/agent/executions/${one.id}/cancel`, { key, method: 'POST' })).status).toBe(409);
      expect(await app.container.agents.runtime.hasCheckpoint(one.id)).toBe(false);

      const two = await pausedRun();
      // Nothing expires before its time; a sweep after it fails the run, saying what it waited for.
      expect(await app.container.agents.executions.expirePaused(new Date())).toBe(0);
      const later = new Date(Date.parse(two.pause?.expires_at ?? '') + 1000);
      expect(await app.container.agents.executions.expirePaused(later)).toBe(1);
      const expired = (await (
        await call(`${app.url}/v1/agent/executions/${two.id}`, { key })
      ).json()) as ExecutionWire & {
        usage: { message: string };
      };
      expect(expired.status).toBe('failed');
      expect(expired.usage.message).toContain("approval of the call to 'ocr_image'");
      expect(expired.usage.message).toContain('PRISM_AGENT_PAUSE_TTL_S');
      const resumeExpired = await call(`${app.url}/v1/agent/executions/${two.id}/resume`, {
        key,
        json: { action: 'approve' },
      });
      expect(resumeExpired.status).toBe(409);
      expect(await codeOf(resumeExpired)).toBe('execution_not_paused');

      // A running run (a batch run whose planner never answers) is stopped and ends failed, saying so.
      upstream.next({ kind: 'hang' });
      const queued = (await (
        await call(`${app.url}/v1/agent/execute`, { key, json: { batch: true, inputs: {}, config: { prompt: 'x' } } })
      ).json()) as ExecutionWire;
      const get = async () =>
        (await (await call(`${app.url}/v1/agent/executions/${queued.id}`, { key })).json()) as ExecutionWire & {
          usage: { message: string };
        };
      const requests = upstream.requests.length;
      for (let i = 0; i < 400 && upstream.requests.length === requests; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect((await get()).status).toBe('running');
      const answered = await call(`${app.url}/v1/agent/executions/${queued.id}/cancel`, { key, method: 'POST' });
      // The answer waited for the run to stop.
      expect(((await answered.json()) as ExecutionWire).status).toBe('failed');
      await app.container.jobs.idle();
      const stopped = await get();
      expect(stopped.status).toBe('failed');
      expect(stopped.usage.message).toContain('cancelled');
    } finally {
      await app.close();
    }
  });

  it('a skill-graph state asks its question first, and the planner reads the answer', async () => {
    const app = await startTestApp(env);
    try {
      const key = await app.createKey('question-org');
      await app.container.services.accounts.addCredits('question-org', 1);
      const prismYaml = [
        'apiVersion: prism/v1alpha',
        'graph: |',
        '  stateDiagram-v2',
        '    [*] --> Draft',
        '    Draft --> Review',
        '    Review --> [*]',
        'pauses:',
        "  Review: 'Which currency should the totals use?'",
        '',
      ].join('\n');
      const zip = craftZip([
        { name: 'SKILL.md', data: skillMd('totals-review') },
        { name: 'prism.yaml', data: prismYaml },
      ]);
      const skills = [{ type: 'inline', source: { type: 'base64', data: zip.toString('base64') } }];
      upstream.next({ kind: 'reply', content: 'Draft done.', usage: { prompt_tokens: 5, completion_tokens: 5 } });
      const paused = (await (
        await call(`${app.url}/v1/agent/execute`, { key, json: { inputs: {}, config: { prompt: 'Sum it', skills } } })
      ).json()) as ExecutionWire & { pause: { question: string; goal: string; resume: string[] } };
      expect(paused.status).toBe('paused');
      expect(paused.pause).toMatchObject({
        kind: 'question',
        question: 'Which currency should the totals use?',
        goal: 'Review',
        tool_call: null,
        resume: ['answer', 'reject'],
      });
      const edit = await call(`${app.url}/v1/agent/executions/${paused.id}/resume`, {
        key,
        json: { action: 'edit', arguments: {} },
      });
      expect(await codeOf(edit)).toBe('invalid_decision');
      upstream.next({ kind: 'reply', content: 'Totals in EUR.', usage: { prompt_tokens: 5, completion_tokens: 5 } });
      const seen = upstream.requests.length;
      // Two answers at once: one continues the run, the other is told it is no longer paused.
      const answers = await Promise.all(
        ['euros', 'dollars'].map((text) =>
          call(`${app.url}/v1/agent/executions/${paused.id}/resume`, { key, json: { action: 'answer', text } }),
        ),
      );
      expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
      const winner = answers.find((r) => r.status === 200) as Response;
      const done = (await winner.json()) as ExecutionWire;
      expect(done).toMatchObject({ status: 'completed', response: { text: 'Totals in EUR.' } });
      const asked = upstream.requests[seen]?.body as { messages: { role: string; content: string }[] };
      expect(asked.messages.at(-1)?.content).toContain('Which currency should the totals use?');
      expect(asked.messages.at(-1)?.content).toMatch(/The person answered: (euros|dollars)$/);

      // A graph without the state it names is refused when the skill is read.
      const bad = craftZip([
        { name: 'SKILL.md', data: skillMd('bad-pauses') },
        { name: 'prism.yaml', data: prismYaml.replace('  Review:', '  Nowhere:') },
      ]);
      const refused = await call(`${app.url}/v1/agent/execute`, {
        key,
        json: {
          inputs: {},
          config: {
            prompt: 'x',
            skills: [{ type: 'inline', source: { type: 'base64', data: bad.toString('base64') } }],
          },
        },
      });
      expect(refused.status).toBe(400);
      expect(await codeOf(refused)).toBe('invalid_skill_bundle');
    } finally {
      await app.close();
    }
  });
});
