/**
 * What tracing costs an agent step (issue 46: "agent step overhead with tracing off, and with tracing on"): the
 * LangGraph loop with SQLite checkpoints driven by an instant planner and an instant tool (as agents.bench.ts's loop
 * overhead), per step excluding planner and tool time, in three phases of one process: tracing off, tracing on
 * (spans for each step and tool call exported over OTLP/HTTP JSON to a receiver on loopback that reads and drops
 * them), and off again (the two off phases show the machine's drift). Reported as ratios to the first off phase.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BUILTIN_GRAPHS } from '../agent-graphs';
import { createAgentRuntime } from '../src/agents/agent-runtime';
import { defineTool, z, type PlannerModel, type ToolContext } from '../src/agents/sdk';
import { createToolRegistry } from '../src/agents/tool-registry';
import { createLogger } from '../src/lib/logger';
import { startTracing, tracingOn } from '../src/lib/tracing';
import { openDatabase } from '../src/backend/sqlite/database';
import { LeanSqliteSaver } from '../src/backend/sqlite/graph-checkpoints';

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

export async function tracingBenchmarks(runs = 40, steps = 12): Promise<string[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-bench-tracing-'));
  const db = openDatabase(path.join(dir, 'loop.db'));
  let exportedBytes = 0;
  const receiver = http.createServer((req, res) => {
    req.on('data', (c: Buffer) => (exportedBytes += c.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const echo = defineTool({
    name: 'echo_value',
    description: 'Returns its input unchanged (benchmark tool).',
    inputSchema: z.object({ value: z.number() }),
    outputSchema: z.object({ value: z.number() }),
    annotations: { readOnlyHint: true },
    handler: async ({ value }) => ({ value }),
  });
  const tools = createToolRegistry([echo]);
  const runtime = createAgentRuntime({
    tools,
    graphs: BUILTIN_GRAPHS,
    checkpointer: new LeanSqliteSaver(db),
    logger: createLogger('silent'),
  });
  let seq = 0;
  /** Per-step overhead (wall, CPU) p50 over `runs` runs. */
  const phase = async (): Promise<{ wall: number; cpu: number }> => {
    const wall: number[] = [];
    const cpu: number[] = [];
    for (let run = 0; run < runs; run += 1) {
      let plannerMs = 0;
      let turn = 0;
      const planner: PlannerModel = {
        kind: 'language-model',
        servedBy: 'bench',
        async plan() {
          const t = performance.now();
          turn += 1;
          const step =
            turn < steps
              ? { content: null, toolCalls: [{ id: `c${turn}`, name: 'echo_value', arguments: { value: turn } }] }
              : { content: '{"done": true}', toolCalls: [] };
          plannerMs += performance.now() - t;
          return { ...step, usage: { inputTokens: 0, outputTokens: 0, costMicros: 0 } };
        },
      };
      const id = `bench-${(seq += 1)}`;
      const started = performance.now();
      const used0 = process.cpuUsage();
      const result = await runtime.run({
        executionId: id,
        task: { prompt: null, inputs: [], responseSchema: null, goals: [] },
        skills: [],
        tools: tools.list(),
        planner,
        context: () => ({}) as ToolContext,
        maxSteps: steps + 2,
        deadlineMs: 60_000,
        resume: false,
      });
      const elapsed = performance.now() - started;
      const used = process.cpuUsage(used0);
      const toolMs = result.trace.filter((e) => e.kind === 'tool').reduce((n, e) => n + e.durationMs, 0);
      wall.push((elapsed - plannerMs - toolMs) / result.trace.length);
      cpu.push(((used.user + used.system) / 1000 - plannerMs - toolMs) / result.trace.length);
      await runtime.discard(id);
    }
    return { wall: median(wall), cpu: median(cpu) };
  };
  try {
    await phase(); // warm-up
    const off = await phase();
    const { port } = receiver.address() as AddressInfo;
    const tracing = await startTracing({
      tracesUrl: `http://127.0.0.1:${port}/v1/traces`,
      serviceName: 'prism-bench',
      headers: {},
      batchDelayMs: 200,
    });
    if (!tracingOn()) throw new Error('tracing did not start');
    let on: { wall: number; cpu: number };
    try {
      await phase(); // warm-up with the SDK loaded
      on = await phase();
    } finally {
      await tracing.shutdown();
    }
    const offAgain = await phase();
    const line = (name: string, p: { wall: number; cpu: number }) =>
      `${name}: ${p.wall.toFixed(3)} ms wall (${(p.wall / off.wall).toFixed(2)}x), ` +
      `${p.cpu.toFixed(3)} ms CPU (${(p.cpu / off.cpu).toFixed(2)}x)`;
    return [
      `tracing: agent step overhead p50 per step (LangGraph + SQLite checkpoint, excluding planner and tool time), ` +
        `${runs} runs of ${steps * 2 - 1} steps per phase, ratios to tracing off:\n` +
        `  ${line('tracing off', off)}\n  ${line('tracing on (OTLP/HTTP JSON to loopback)', on)}\n` +
        `  ${line('tracing off again', offAgain)}\n  exported ${(exportedBytes / 1024).toFixed(0)} KiB of spans`,
    ];
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}
