/**
 * Agent runtime benchmarks (targets, issue 48: program-mode replay of a skill >= 100x faster than its agent-mode run
 * against an upstream answering in 200 ms per call; runtime overhead per loop step on SQLite, excluding tool and
 * model time, <= 0.5 ms p50; measured with both checkpoint durabilities, and on PostgreSQL when one is configured).
 *
 * Replay vs agent: the real app with prism-orion-2 planned by a scripted upstream that answers each call after
 * 200 ms (a fill_json_schema call on a text input, then the answer); the same skill, input and schema run in agent
 * mode, then replayed as its compiled program (no model call). The tool is cheap on purpose, so the ratio measures
 * the runtime and the model rather than OCR. Overhead: the LangGraph loop with SQLite checkpoints driven by an instant
 * planner and an instant tool; per run, (wall time - planner time - tool time) / steps.
 *
 * Streamed agent chat: prism-orion-1 planned by a scripted upstream that streams a tool call, then an answer of 40
 * pieces 10 ms apart (each round after 100 ms, as a fast model). Time to the first text of a streamed call against
 * the whole reply of the same turn not streamed, through the official openai SDK: what streaming saves the reader.
 */
import fs from 'node:fs';
import OpenAI from 'openai';
import os from 'node:os';
import path from 'node:path';
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { createAgentRuntime, type AgentRuntime } from '../src/agents/agent-runtime';
import type { CheckpointDurability } from '../src/agents/checkpoint-durability';
import { BUILTIN_GRAPHS } from '../agent-graphs';
import { defineTool, z, type PlannerModel, type ToolContext } from '../src/agents/sdk';
import { createToolRegistry, type ToolRegistry } from '../src/agents/tool-registry';
import { loadConfig } from '../src/config/config';
import { startServer } from '../src/http-server';
import { createLogger } from '../src/lib/logger';
import { openDatabase } from '../src/backend/sqlite/database';
import { createPostgresCheckpointer } from '../src/backend/postgres/graph-checkpoints';
import { LeanSqliteSaver } from '../src/backend/sqlite/graph-checkpoints';
import { craftZip, skillMd } from '../test/helpers/crafted-zip';
import type { GroupReport } from './harness';
import { startScriptedUpstream } from '../test/helpers/scripted-upstream';

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** The real app on a data folder of its own, its one model planned by a scripted upstream. */
export async function startPlannerApp(prefix: string, modelYaml: string) {
  const upstream = await startScriptedUpstream();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const models = path.join(dataDir, 'models.yaml');
  fs.writeFileSync(models, `upstreams:\n  - name: lab\n    base_url: ${upstream.baseUrl}\nmodels:\n${modelYaml}`);
  const config = loadConfig({
    PRISM_DATA_DIR: dataDir,
    PORT: '0',
    PRISM_LOG_LEVEL: 'silent',
    PRISM_MODELS_FILE: models,
  });
  const running = await startServer(config, { announce: () => undefined });
  const key = fs.readFileSync(config.data.ownerKeyPath, 'utf8').trim();
  return {
    upstream,
    url: running.url,
    key,
    container: running.container,
    async close(): Promise<void> {
      await running.close();
      await upstream.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Replays timed per agent run: a replay is short, so more of them steady its median. */
const REPLAYS_PER_RUN = 5;

async function replayVersusAgent(runs: number, figures: Record<string, number>): Promise<string> {
  const app = await startPlannerApp(
    'prism-bench-agents-',
    '  - id: prism-orion-2\n    engine: { kind: upstream, upstream: lab, model: planner }\n' +
      '    capabilities: { supported_input_types: [text] }\n',
  );
  const { upstream, key } = app;
  const headers = { authorization: `Bearer ${key}` };
  const post = async (route: string, body: unknown) =>
    (await fetch(`${app.url}${route}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.json())) as Record<string, unknown>;
  const upload = async (bytes: Buffer, name: string) => {
    const form = new FormData();
    form.append('file', new Blob([bytes]), name);
    const res = await fetch(`${app.url}/v1/files`, { method: 'POST', headers, body: form });
    return ((await res.json()) as { id: string }).id;
  };
  try {
    const zipId = await upload(craftZip([{ name: 'SKILL.md', data: skillMd('bench-notes') }]), 's.zip');
    await post('/v1/skills/create', { file_id: zipId });
    // A text input and a cheap tool, so the comparison measures the runtime and the model, not OCR.
    const note = 'Delivery note\nCompany: GREENLEAF GROCERY LTD\nDate: 2024-03-14\nTotal: 42.50';
    const schema = { type: 'object', properties: { company: { type: 'string' } }, required: ['company'] };
    const body = {
      model: 'prism-orion-2',
      inputs: { note: { type: 'text', text: note } },
      config: {
        json_schema: schema,
        skills: [{ type: 'skill_reference', skill_id: 'bench-notes' }],
        mode: 'program',
      },
    };
    const script = () =>
      upstream.next(
        {
          kind: 'reply',
          delayMs: 200,
          toolCalls: [{ name: 'fill_json_schema', arguments: JSON.stringify({ json_schema: schema, text: note }) }],
        },
        { kind: 'reply', delayMs: 200, content: '{"company": "GREENLEAF GROCERY LTD"}' },
      );
    const agent: number[] = [];
    const replay: number[] = [];
    // One agent run compiles and verifies the program before timing starts.
    script();
    const first = await post('/v1/agent/execute', body);
    if (first.status !== 'completed') throw new Error(`the first run did not complete: ${JSON.stringify(first)}`);
    for (let i = 0; i < runs; i += 1) {
      // Agent mode: `mode: agent` so every run plans with the model.
      script();
      let t = performance.now();
      const a = await post('/v1/agent/execute', { ...body, config: { ...body.config, mode: 'agent' } });
      agent.push(performance.now() - t);
      if (a.execution_mode !== 'agent') throw new Error('expected an agent run');
      for (let r = 0; r < REPLAYS_PER_RUN; r += 1) {
        t = performance.now();
        const p = await post('/v1/agent/execute', body);
        replay.push(performance.now() - t);
        if (p.execution_mode !== 'program') {
          throw new Error(`expected a program replay, got ${String(p.execution_mode)}`);
        }
        const company = (p.response as { company?: unknown } | null)?.company;
        if (company !== 'GREENLEAF GROCERY LTD') throw new Error(`the replay answered ${String(company)}`);
      }
    }
    const ratio = median(agent) / median(replay);
    figures['replay_speedup_x'] = ratio;
    figures['replay_p50_ms'] = median(replay);
    figures['agent_run_p50_ms'] = median(agent);
    return (
      `agents: agent-mode run p50 ${median(agent).toFixed(1)} ms (${runs} runs) vs program replay p50 ` +
      `${median(replay).toFixed(1)} ms (${replay.length} replays), upstream 200 ms per call: replay ` +
      `${ratio.toFixed(1)}x faster (target >= 100x)`
    );
  } finally {
    await app.close();
  }
}

/** One loop run of `steps` planner turns through `runtime`; its wall and CPU time per step, planner and tools excluded. */
async function loopRun(runtime: AgentRuntime, tools: ToolRegistry, id: string, steps: number) {
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
  const started = performance.now();
  const cpu = process.cpuUsage();
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
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const toolMs = result.trace.filter((e) => e.kind === 'tool').reduce((n, e) => n + e.durationMs, 0);
  await runtime.discard(id);
  return {
    wall: (wall - plannerMs - toolMs) / result.trace.length,
    cpu: ((used.user + used.system) / 1000 - plannerMs - toolMs) / result.trace.length,
  };
}

/** The loop's checkpointers: SQLite always, PostgreSQL with PRISM_BENCH_DATABASE_URL (or PRISM_TEST_DATABASE_URL). */
async function loopCheckpointers(db: ReturnType<typeof openDatabase>) {
  const savers: { name: string; saver: BaseCheckpointSaver; durability: CheckpointDurability }[] = [
    { name: 'SQLite, async (the SQLite default)', saver: new LeanSqliteSaver(db), durability: 'async' },
    { name: 'SQLite, sync', saver: new LeanSqliteSaver(db), durability: 'sync' },
  ];
  const url = process.env.PRISM_BENCH_DATABASE_URL ?? process.env.PRISM_TEST_DATABASE_URL;
  let end = async (): Promise<void> => undefined;
  let skipped: string | null = null;
  if (!url) {
    skipped = 'agents: loop overhead on PostgreSQL skipped (set PRISM_BENCH_DATABASE_URL to measure it)';
    return { savers, end, skipped };
  }
  try {
    const pg = await createPostgresCheckpointer(url, `bench_loop_${process.pid}`);
    end = pg.end;
    savers.push({ name: 'PostgreSQL, sync (the PostgreSQL default)', saver: pg.saver, durability: 'sync' });
    savers.push({ name: 'PostgreSQL, async', saver: pg.saver, durability: 'async' });
  } catch (error) {
    skipped = `agents: loop overhead on PostgreSQL skipped (${(error as Error).message.split('\n')[0]})`;
  }
  return { savers, end, skipped };
}

/**
 * The loop's overhead per step with each checkpointer and durability, runs interleaved so load hits each alike.
 * `figures` gets one `loop_cpu_ms_per_step.<backend>_<durability>` entry each (bench/results JSON).
 */
async function loopOverhead(runs: number, steps: number, figures: Record<string, number>): Promise<string[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-bench-loop-'));
  const db = openDatabase(path.join(dir, 'loop.db'));
  const echo = defineTool({
    name: 'echo_value',
    description: 'Returns its input unchanged (benchmark tool).',
    inputSchema: z.object({ value: z.number() }),
    outputSchema: z.object({ value: z.number() }),
    annotations: { readOnlyHint: true },
    handler: async ({ value }) => ({ value }),
  });
  const tools = createToolRegistry([echo]);
  const { savers, end, skipped } = await loopCheckpointers(db);
  const lines: string[] = [];
  try {
    const runtimes = savers.map((s) => ({
      ...s,
      runtime: createAgentRuntime({
        tools,
        graphs: BUILTIN_GRAPHS,
        checkpointer: s.saver,
        durability: s.durability,
        logger: createLogger('silent'),
      }),
      wall: [] as number[],
      cpu: [] as number[],
    }));
    // Warm-up (JIT, statement caches), then the measured runs, one of each checkpointer in turn.
    for (const r of runtimes) for (let i = 0; i < 3; i += 1) await loopRun(r.runtime, tools, `warm-${i}`, steps);
    for (let run = 0; run < runs; run += 1) {
      for (const r of runtimes) {
        // CPU time as well: on a shared machine wall time also counts waiting for a core.
        const per = await loopRun(r.runtime, tools, `bench-${run}`, steps);
        r.wall.push(per.wall);
        r.cpu.push(per.cpu);
      }
    }
    const base = runtimes[0] as (typeof runtimes)[number];
    for (const r of runtimes) {
      const key = r.name.startsWith('SQLite') ? 'sqlite' : 'postgres';
      figures[`loop_cpu_ms_per_step.${key}_${r.durability}`] = median(r.cpu);
      figures[`loop_wall_ms_per_step.${key}_${r.durability}`] = median(r.wall);
      lines.push(
        `agents: loop overhead per step, ${r.name} (LangGraph + checkpoint, excluding planner and tool time) p50 ` +
          `${median(r.wall).toFixed(3)} ms wall, ${median(r.cpu).toFixed(3)} ms CPU, over ${runs} runs of ` +
          `${steps * 2 - 1} steps; ${(median(r.cpu) / median(base.cpu)).toFixed(2)}x the CPU of ${base.name} ` +
          `(target on SQLite <= 0.5 ms)`,
      );
    }
  } finally {
    await end();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  if (skipped) lines.push(skipped);
  return lines;
}

async function streamedChatFirstText(runs: number, figures: Record<string, number>): Promise<string> {
  const app = await startPlannerApp(
    'prism-bench-chat-',
    '  - id: prism-orion-1\n    engine: { kind: upstream, upstream: lab, model: planner }\n' +
      '    capabilities: { supported_input_types: [text] }\n' +
      '    supported_parameters: [tools, tool_choice, temperature, stream, stream_options, max_tokens]\n',
  );
  const { upstream } = app;
  const client = new OpenAI({ apiKey: app.key, baseURL: `${app.url}/v1/openai`, maxRetries: 0 });
  const usage = { prompt_tokens: 400, completion_tokens: 100 };
  const script = (): void =>
    upstream.next(
      {
        kind: 'stream',
        firstChunkDelayMs: 100,
        chunks: [
          {
            toolCallDeltas: [
              { index: 0, id: 'call_hub', name: 'lookup_hub_domain', arguments: '{"domain": "document.invoice"}' },
            ],
          },
        ],
        usage,
      },
      {
        kind: 'stream',
        firstChunkDelayMs: 100,
        chunkDelayMs: 10,
        chunks: Array.from({ length: 40 }, (_, i) => ({ content: `piece ${String(i).padStart(2, '0')} ` })),
        usage,
      },
    );
  const messages = [{ role: 'user' as const, content: 'What does the invoice domain read?' }];
  const firstText: number[] = [];
  const streamedWhole: number[] = [];
  const whole: number[] = [];
  try {
    for (let i = 0; i < runs; i += 1) {
      script();
      let t = performance.now();
      let first = Number.NaN;
      let text = '';
      const stream = await client.chat.completions.create({ model: 'prism-orion-1', stream: true, messages });
      for await (const chunk of stream) {
        const piece = chunk.choices[0]?.delta.content ?? '';
        if (piece !== '' && Number.isNaN(first)) first = performance.now() - t;
        text += piece;
      }
      streamedWhole.push(performance.now() - t);
      firstText.push(first);
      if (!text.startsWith('piece 00')) throw new Error(`the streamed turn answered ${text.slice(0, 40)}`);
      script();
      t = performance.now();
      const reply = await client.chat.completions.create({ model: 'prism-orion-1', messages });
      whole.push(performance.now() - t);
      if (!reply.choices[0]?.message.content?.startsWith('piece 00')) throw new Error('the whole turn answered');
    }
    figures['chat_first_text_sooner_x'] = median(whole) / median(firstText);
    return (
      `agents: streamed agent chat (a tool round, then a 360-character answer in 40 pieces 10 ms apart): first text ` +
      `p50 ${median(firstText).toFixed(0)} ms, last ${median(streamedWhole).toFixed(0)} ms; the same turn not ` +
      `streamed ${median(whole).toFixed(0)} ms; the reader sees text ${(median(whole) / median(firstText)).toFixed(1)}x ` +
      `sooner (${runs} runs each; the first 120 characters are held back to drop tool preambles)`
    );
  } finally {
    await app.close();
  }
}

export async function agentBenchmarks(): Promise<GroupReport> {
  const figures: Record<string, number> = {};
  const notes = [
    ...(await loopOverhead(40, 10, figures)),
    await replayVersusAgent(7, figures),
    await streamedChatFirstText(5, figures),
  ];
  return { notes, figures };
}
