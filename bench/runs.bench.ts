/**
 * Agent runs people watch and steer (docs/agent-runs.md): how fast a run's events reach an SSE client, how fast a
 * resume continues a paused run, and what the events cost a step when nobody follows the run.
 *
 * - Delivery: the real app, a scripted planner that calls a cheap tool (`lookup_hub_domain`) ten times, answering
 *   each call in 20 ms, a client on `stream: true` over plain HTTP. Per change, the time from the "something changed" signal (published
 *   right after the step or status is saved) to the client reading the events it brings.
 * - Resume: a run paused before an approved tool; the time from sending `POST …/resume` (approve, detached with
 *   `stream: true`) to the client reading `execution.status: running`, and to reading the tool's result minus the
 *   tool's own time. The planner is not involved in either (its next call comes after).
 * - Cost with nobody listening: the only per-step addition is one publish on the signal bus that nobody receives.
 *   Runs of 21 steps through the app (instant planner and tool, nobody following), alternately with the publish and
 *   with it switched off (as before events existed): the ratio of the median time per step; and the publish alone.
 *
 * The machine is shared while these run, so the figures are reported with ratios where there is a baseline.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { createLocalSignalBus } from '../src/backend/local/signal-bus';
import { startPlannerApp } from './agents.bench';

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

interface Frame {
  at: number;
  event: string;
  data: Record<string, unknown>;
}

/** A plain-HTTP SSE reader that stamps each frame with the time its bytes arrived. */
function readEvents(url: string, key: string, body?: unknown): { frames: Frame[]; done: Promise<void> } {
  const frames: Frame[] = [];
  const done = new Promise<void>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      url,
      {
        method: payload ? 'POST' : 'GET',
        headers: { authorization: `Bearer ${key}`, ...(payload ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const at = performance.now();
          buffer += chunk;
          let cut = buffer.indexOf('\n\n');
          while (cut >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            cut = buffer.indexOf('\n\n');
            const event = /^event: (.*)$/m.exec(block)?.[1];
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (event && data) frames.push({ at, event, data: JSON.parse(data) as Record<string, unknown> });
          }
        });
        res.on('end', resolve);
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
  return { frames, done };
}

/** Wall-clock time with sub-millisecond precision, comparable between processes of one machine. */
const now = (): number => performance.timeOrigin + performance.now();

/**
 * The same reader in a process of its own: a client in the server's process could only read a frame once the
 * server's event loop is free, which would count the run's next step as delivery time. Prints one JSON line per
 * frame with the time its bytes arrived.
 */
const CHILD_READER = `
const http = require('node:http');
const [url, key, body] = process.argv.slice(1);
const now = () => performance.timeOrigin + performance.now();
const req = http.request(url, { method: 'POST', headers: { authorization: 'Bearer ' + key, 'content-type': 'application/json' } }, (res) => {
  let buffer = '';
  res.setEncoding('utf8');
  res.on('data', (chunk) => {
    const at = now();
    buffer += chunk;
    let cut = buffer.indexOf('\\n\\n');
    while (cut >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      cut = buffer.indexOf('\\n\\n');
      const event = /^event: (.*)$/m.exec(block);
      const data = /^data: (.*)$/m.exec(block);
      if (event && data) process.stdout.write(JSON.stringify({ at, event: event[1], data: JSON.parse(data[1]) }) + '\\n');
    }
  });
});
req.end(body);
`;

function readEventsElsewhere(url: string, key: string, body: unknown): { frames: Frame[]; done: Promise<void> } {
  const frames: Frame[] = [];
  const child = spawn(process.execPath, ['-e', CHILD_READER, url, key, JSON.stringify(body)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let rest = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    rest += chunk;
    const lines = rest.split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') frames.push(JSON.parse(line) as Frame);
  });
  const done = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return { frames, done };
}

const hubCall = (i: number, delayMs = 0) => ({
  kind: 'reply' as const,
  toolCalls: [{ id: `c${i}`, name: 'lookup_hub_domain', arguments: '{"domain": "document.invoice"}' }],
  usage: { prompt_tokens: 10, completion_tokens: 5 },
  delayMs,
});

export async function runsBenchmarks(): Promise<string[]> {
  const app = await startPlannerApp(
    'prism-bench-runs-',
    '  - id: prism-orion-1\n    engine: { kind: upstream, upstream: lab, model: planner }\n' +
      '    capabilities: { supported_input_types: [text] }\n',
  );
  const { upstream, key, container } = app;
  const published: number[] = [];
  const delivery: number[] = [];
  const resumeRunning: number[] = [];
  const resumeTool: number[] = [];
  const perStepOn: number[] = [];
  const perStepOff: number[] = [];
  try {
    // Delivery: every signal of the run, against the first frame read after it. The planner answers in 20 ms (a
    // fast model), so the process is not busy with the next step when a change is delivered.
    for (let run = 0; run < 5; run += 1) {
      upstream.next(...Array.from({ length: 10 }, (_, i) => hubCall(i, 20)), {
        kind: 'reply',
        content: 'done',
        usage: { prompt_tokens: 10, completion_tokens: 5 },
      });
      published.length = 0;
      const stream = readEventsElsewhere(`${app.url}/v1/agent/execute`, key, {
        stream: true,
        inputs: {},
        config: { prompt: 'go' },
      });
      // The run's id arrives with its first event; its channel is listened to from then on.
      while (stream.frames.length === 0) await new Promise((r) => setTimeout(r, 1));
      // (The first signals, before the client had the run's id, are not counted.)
      const id = stream.frames[0]?.data.execution_id as string;
      const stop = container.signals.subscribe(`executions:changed:${id}`, () => published.push(now()));
      await stream.done;
      stop();
      for (const at of published) {
        const next = stream.frames.find((f) => f.at >= at);
        if (next) delivery.push(next.at - at);
      }
    }
    // Per step, nobody following: with the publish, and with it switched off as before events existed.
    const publish = container.signals.publish.bind(container.signals);
    for (let run = 0; run < 60; run += 1) {
      const off = run % 2 === 1;
      if (off) container.signals.publish = async () => undefined;
      upstream.next(...Array.from({ length: 10 }, (_, i) => hubCall(i)), {
        kind: 'reply',
        content: 'done',
        usage: { prompt_tokens: 10, completion_tokens: 5 },
      });
      const started = performance.now();
      const done = (await (
        await fetch(`${app.url}/v1/agent/execute`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ inputs: {}, config: { prompt: 'go' } }),
        })
      ).json()) as { steps: unknown[] };
      (off ? perStepOff : perStepOn).push((performance.now() - started) / done.steps.length);
      container.signals.publish = publish;
    }
    // Resume: paused before an approved tool call, resumed detached with its events streamed back.
    for (let run = 0; run < 10; run += 1) {
      upstream.next(hubCall(0));
      const paused = (await (
        await fetch(`${app.url}/v1/agent/execute`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ inputs: {}, config: { prompt: 'go', require_approval: ['lookup_hub_domain'] } }),
        })
      ).json()) as { id: string; status: string };
      if (paused.status !== 'paused') throw new Error(`the run did not pause (${paused.status})`);
      upstream.next({ kind: 'reply', content: 'done', usage: { prompt_tokens: 10, completion_tokens: 5 } });
      const sent = performance.now();
      const stream = readEvents(`${app.url}/v1/agent/executions/${paused.id}/resume`, key, {
        action: 'approve',
        stream: true,
      });
      await stream.done;
      const running = stream.frames.find((f) => f.event === 'execution.status' && f.data.status === 'running');
      const tool = stream.frames.find((f) => f.event === 'execution.tool_result');
      if (!running || !tool) throw new Error('the resumed run sent no running status or tool result');
      resumeRunning.push(running.at - sent);
      resumeTool.push(tool.at - sent - Number(tool.data.duration_ms));
    }
  } finally {
    await app.close();
  }

  // What a step pays for the events when nobody follows: one publish without a subscriber.
  const bus = createLocalSignalBus();
  const n = 100_000;
  let t = performance.now();
  for (let i = 0; i < n; i += 1) void bus.publish(`executions:changed:${i % 100}`, '1').catch(() => undefined);
  const publishUs = ((performance.now() - t) / n) * 1000;
  t = performance.now();
  for (let i = 0; i < n; i += 1) void Promise.resolve().catch(() => undefined);
  const baselineUs = ((performance.now() - t) / n) * 1000;
  await bus.close();

  return [
    `runs: event delivery, signal (step saved) -> SSE client, p50 ${median(delivery).toFixed(2)} ms over ` +
      `${delivery.length} changes of 5 runs of 21 steps, planner 20 ms per call (target <= 5 ms; machine shared)`,
    `runs: resume -> running again p50 ${median(resumeRunning).toFixed(1)} ms; resume -> tool result read, tool time ` +
      `excluded, p50 ${median(resumeTool).toFixed(1)} ms (10 resumes; no planner call in either; target <= 50 ms)`,
    `runs: time per step with nobody following, events on / off (as before): ` +
      `${(median(perStepOn) / median(perStepOff)).toFixed(3)}x (p50 ${median(perStepOn).toFixed(2)} vs ` +
      `${median(perStepOff).toFixed(2)} ms per step incl. the scripted planner's HTTP round trip, 30 runs of 21 ` +
      `steps each); the publish alone ${publishUs.toFixed(2)} us (an empty promise chain ${baselineUs.toFixed(2)} us)`,
  ];
}
