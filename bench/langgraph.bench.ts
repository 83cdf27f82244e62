/**
 * The LangGraph Platform API on Prism (docs/langgraph.md), through the LangGraph JS SDK's Client:
 *
 * - Round trip: a stateless `runs.wait` against the same one-step execution through `/v1/agent/execute` (the planner
 *   a scripted upstream answering at once), alternated in one run: the ratio of the medians is what the LangGraph
 *   layer (a thread, its checkpoints, the run record) adds. Likewise a streamed run (`runs.stream`, values) against
 *   `/v1/agent/execute` with `stream: true`, both read to the end.
 * - Store search: p50 of `store.searchItems` with a natural-language `query` over N items under one prefix
 *   (`PRISM_BENCH_STORE_ITEMS`, default `10000,100000`), each item with a 256-dimension vector: the search reads the
 *   prefix's rows and scores them in the process (no vector index), so it grows with N.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@langchain/langgraph-sdk';
import { startPlannerApp } from './agents.bench';

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const ROUND_TRIPS = 30;
const SEARCHES = 20;
const DIMENSIONS = 256;

const answer = { kind: 'reply' as const, content: 'done', usage: { prompt_tokens: 10, completion_tokens: 5 } };

/** A random unit vector: what a search reads and scores does not depend on what the vectors say. */
function unitVector(): Float32Array {
  const v = new Float32Array(DIMENSIONS);
  let norm = 0;
  for (let i = 0; i < DIMENSIONS; i += 1) {
    v[i] = Math.random() - 0.5;
    norm += v[i]! * v[i]!;
  }
  const scale = 1 / Math.sqrt(norm);
  for (let i = 0; i < DIMENSIONS; i += 1) v[i]! *= scale;
  return v;
}

export async function langgraphBenchmarks(): Promise<{ notes: string[]; figures: Record<string, number> }> {
  const app = await startPlannerApp(
    'prism-bench-langgraph-',
    '  - id: prism-orion-1\n    engine: { kind: upstream, upstream: lab, model: planner }\n' +
      '    capabilities: { supported_input_types: [text] }\n',
  );
  const { upstream, key, container } = app;
  const client = new Client({ apiUrl: `${app.url}/v1/langgraph`, defaultHeaders: { Authorization: `Bearer ${key}` } });
  const execute = (stream: boolean) =>
    fetch(`${app.url}/v1/agent/execute`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: {}, config: { prompt: 'go' }, ...(stream ? { stream: true } : {}) }),
    }).then((r) => r.text());
  const input = { messages: [{ role: 'user', content: 'go' }] };
  const notes: string[] = [];
  const figures: Record<string, number> = {};
  try {
    const wait: number[] = [];
    const plain: number[] = [];
    const streamed: number[] = [];
    const plainStreamed: number[] = [];
    for (let i = 0; i < ROUND_TRIPS + 3; i += 1) {
      const timed = async (run: () => Promise<unknown>): Promise<number> => {
        upstream.next(answer);
        const started = performance.now();
        await run();
        return performance.now() - started;
      };
      const a = await timed(() => client.runs.wait(null, 'agent', { input }));
      const b = await timed(() => execute(false));
      const c = await timed(async () => {
        for await (const chunk of client.runs.stream(null, 'agent', { input, streamMode: 'values' })) void chunk;
      });
      const d = await timed(() => execute(true));
      if (i < 3) continue; // warm-up
      wait.push(a);
      plain.push(b);
      streamed.push(c);
      plainStreamed.push(d);
    }
    figures['runs_wait_p50_ms'] = median(wait);
    figures['execute_p50_ms'] = median(plain);
    figures['runs_wait_over_execute_x'] = median(wait) / median(plain);
    figures['runs_stream_p50_ms'] = median(streamed);
    figures['execute_stream_p50_ms'] = median(plainStreamed);
    figures['runs_stream_over_execute_stream_x'] = median(streamed) / median(plainStreamed);
    notes.push(
      `runs.wait p50 ${median(wait).toFixed(1)} ms vs /v1/agent/execute ${median(plain).toFixed(1)} ms ` +
        `(x${figures['runs_wait_over_execute_x'].toFixed(2)}); runs.stream p50 ${median(streamed).toFixed(1)} ms vs ` +
        `execute stream ${median(plainStreamed).toFixed(1)} ms (x${figures['runs_stream_over_execute_stream_x'].toFixed(2)}), ` +
        `${ROUND_TRIPS} each, one-step runs, instant planner`,
    );

    const owner = await container.services.accounts.ownerPrincipal();
    if (!owner) throw new Error('no owner');
    const orgId = await container.services.langgraph.orgIdFor(owner);
    const sizes = (process.env.PRISM_BENCH_STORE_ITEMS ?? '10000,100000').split(',').map(Number);
    let stored = 0;
    for (const size of sizes) {
      const at = new Date();
      for (; stored < size; stored += 1) {
        await container.stores.langgraph.put({
          orgId,
          kind: 'item',
          id: JSON.stringify(['bench.notes', `k${stored}`]),
          parent: 'bench.notes',
          body: { key: `k${stored}`, value: { text: `note ${stored} ${randomUUID()}` }, ttl: null },
          vector: unitVector(),
          createdAt: at,
          updatedAt: at,
          expiresAt: null,
        });
      }
      const times: number[] = [];
      for (let i = 0; i < SEARCHES + 2; i += 1) {
        const started = performance.now();
        const found = await client.store.searchItems(['bench'], { query: 'what does Ada drink', limit: 10 });
        if (found.items.length !== 10) throw new Error(`the search found ${found.items.length} items`);
        if (i >= 2) times.push(performance.now() - started);
      }
      figures[`store_search_p50_ms.${size}`] = median(times);
      notes.push(
        `store search p50 at ${size} items: ${median(times).toFixed(1)} ms (${SEARCHES} searches, query ranked)`,
      );
    }
  } finally {
    await app.close();
  }
  return { notes, figures };
}
