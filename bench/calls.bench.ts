/**
 * What an execution, an MCP tool call and a prediction cost per call on the server side, on `prism serve` with
 * SQLite and with PostgreSQL + Redis (issue 43, item 1; the workers bench does the same for gateway chat calls):
 * per call, the CPU time of every server-side process (Prism, the PostgreSQL processes of the bench's own database
 * and the server's background ones, a private redis-server), the PostgreSQL transactions and the Redis commands
 * (bench/process-cost.ts), and which tables the PostgreSQL rows went to (`pg_stat_user_tables` deltas).
 *
 * The calls, CONCURRENCY at a time, against one process per backend:
 * - execution: `POST /v1/agent/execute` of a skill in program mode on a text input (the replay of the program the
 *   first run compiled against a scripted upstream on loopback: no model call per execution);
 * - MCP tool call: a raw JSON-RPC `tools/call get_prediction` POSTed to `/mcp` (stateless Streamable HTTP);
 * - prediction: `POST /v1/image/generate` with prism-1 on a small rendered receipt (synchronous: the answer is the
 *   finished prediction), with one OCR worker.
 *
 * PostgreSQL backends publish their statistics lazily (an idle one within 10 s), so the transaction and table
 * counters are read after SETTLE_MS of quiet, and the server's own idle rate (sweeps, heartbeats), measured over
 * one quiet stretch, is subtracted for each stretch's length. CPU and Redis commands are sampled around the calls.
 * Without `PRISM_BENCH_DATABASE_URL` (or `PRISM_TEST_DATABASE_URL`) only the SQLite lines are printed. Linux only.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool } from 'pg';
import { craftZip, skillMd } from '../test/helpers/crafted-zip';
import { startScriptedUpstream, type ScriptedUpstream } from '../test/helpers/scripted-upstream';
import { callsInParallel, type GroupReport } from './harness';
import { smallReceipt } from './predictions.bench';
import { postgresTransactions, redisCommands, sampleCpu, type CostTargets, type CpuSample } from './process-cost';
import { freePort, startBackends, startChild, stopChild, type Backends } from './serve-children';

const CONCURRENCY = 10;
const WARMUP = 20;
/** `PRISM_BENCH_CALLS_N` / `PRISM_BENCH_CALLS_PREDICTIONS` shorten or lengthen a run. */
const CALLS = Number(process.env.PRISM_BENCH_CALLS_N) || 500;
const PREDICTIONS = Number(process.env.PRISM_BENCH_CALLS_PREDICTIONS) || 150;
/** An idle backend publishes its pending statistics within 10 s. */
const SETTLE_MS = 11_000;

const KINDS = ['execution', 'mcp_tool_call', 'prediction'] as const;
type Kind = (typeof KINDS)[number];

interface KindCost {
  calls: number;
  rps: number;
  cpuUs: CpuSample;
  redisCommands: number;
  transactions: number;
  /** Rows inserted / updated / deleted per table over the stretch. */
  tables: Map<string, { ins: number; upd: number; del: number; scans: number }>;
}

type TableCounts = Map<string, { ins: number; upd: number; del: number; scans: number }>;

/** Row counters of every table of the bench's database (one transaction of its own). */
async function tableCounts(pool: Pool): Promise<TableCounts> {
  const { rows } = await pool.query<{ relname: string; ins: string; upd: string; del: string; scans: string }>(
    'SELECT relname, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_del AS del, ' +
      'seq_scan + coalesce(idx_scan, 0) AS scans FROM pg_stat_user_tables',
  );
  return new Map(
    rows.map((r) => [
      r.relname,
      { ins: Number(r.ins), upd: Number(r.upd), del: Number(r.del), scans: Number(r.scans) },
    ]),
  );
}

function tableDelta(before: TableCounts, after: TableCounts): TableCounts {
  const out: TableCounts = new Map();
  for (const [name, a] of after) {
    const b = before.get(name) ?? { ins: 0, upd: 0, del: 0, scans: 0 };
    const d = { ins: a.ins - b.ins, upd: a.upd - b.upd, del: a.del - b.del, scans: a.scans - b.scans };
    if (d.ins + d.upd + d.del + d.scans > 0) out.set(name, d);
  }
  return out;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A running server made ready for the three kinds: a skill with its compiled program, one prediction. */
async function prepare(
  url: string,
  key: string,
  upstream: ScriptedUpstream,
): Promise<Record<Kind, () => Promise<void>>> {
  const auth = { authorization: `Bearer ${key}` };
  const post = async (route: string, body: unknown, extra: Record<string, string> = {}): Promise<Response> =>
    fetch(`${url}${route}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', ...extra },
      body: JSON.stringify(body),
    });
  const form = new FormData();
  form.append('file', new Blob([craftZip([{ name: 'SKILL.md', data: skillMd('bench-calls') }])]), 's.zip');
  const file = (await (await fetch(`${url}/v1/files`, { method: 'POST', headers: auth, body: form })).json()) as {
    id: string;
  };
  const skill = await post('/v1/skills/create', { file_id: file.id });
  if (!skill.ok) throw new Error(`skill: ${skill.status} ${await skill.text()}`);
  const note = 'Delivery note\nCompany: GREENLEAF GROCERY LTD\nDate: 2024-03-14\nTotal: 42.50';
  const schema = { type: 'object', properties: { company: { type: 'string' } }, required: ['company'] };
  const execution = {
    model: 'prism-orion-2',
    inputs: { note: { type: 'text', text: note } },
    config: { json_schema: schema, skills: [{ type: 'skill_reference', skill_id: 'bench-calls' }], mode: 'program' },
  };
  upstream.next(
    {
      kind: 'reply',
      toolCalls: [{ name: 'fill_json_schema', arguments: JSON.stringify({ json_schema: schema, text: note }) }],
    },
    { kind: 'reply', content: '{"company": "GREENLEAF GROCERY LTD"}' },
  );
  const first = (await (await post('/v1/agent/execute', execution)).json()) as { status?: string };
  if (first.status !== 'completed') throw new Error(`the first execution did not complete: ${JSON.stringify(first)}`);
  const image = `data:image/png;base64,${smallReceipt().toString('base64')}`;
  const prediction = { model: 'prism-1', domain: 'document.receipt', images: [image] };
  const predicted = await post('/v1/image/generate', prediction);
  if (predicted.status !== 201) throw new Error(`prediction: ${predicted.status} ${await predicted.text()}`);
  const { id } = (await predicted.json()) as { id: string };
  const toolCall = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'get_prediction', arguments: { id } },
  };
  return {
    async execution() {
      const res = await post('/v1/agent/execute', execution);
      const body = (await res.json()) as { status?: string; execution_mode?: string };
      if (body.status !== 'completed' || body.execution_mode !== 'program') {
        throw new Error(`execution: ${res.status} ${JSON.stringify(body)}`);
      }
    },
    async mcp_tool_call() {
      const res = await post('/mcp', toolCall, { accept: 'application/json, text/event-stream' });
      const text = await res.text();
      if (res.status !== 200 || text.includes('"isError":true')) throw new Error(`mcp: ${res.status} ${text}`);
    },
    async prediction() {
      const res = await post('/v1/image/generate', prediction);
      if (res.status !== 201) throw new Error(`prediction: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    },
  };
}

interface Setting {
  name: 'sqlite' | 'shared';
  label: string;
}

/** One server life on `setting`: prepare, warm up, then each kind's measured stretch. */
async function measureSetting(
  setting: Setting,
  env: NodeJS.ProcessEnv,
  dataDir: string,
  backends: Backends | null,
  upstream: ScriptedUpstream,
): Promise<Map<Kind, KindCost>> {
  const shared = setting.name === 'shared' && backends !== null;
  const port = await freePort();
  const settingEnv = shared
    ? { ...env, PRISM_DATABASE_URL: backends.databaseUrl, PRISM_REDIS_URL: backends.redisUrl }
    : env;
  const server = await startChild(
    ['bin/prism.js', 'serve'],
    { ...settingEnv, PORT: String(port), PRISM_DATA_DIR: dataDir },
    /listening on/,
  );
  const targets: CostTargets = {
    prismPid: server.child.pid ?? 0,
    database: shared ? backends.database : null,
    redisPid: shared ? backends.redisPid : null,
  };
  const tables = shared ? new Pool({ connectionString: backends.databaseUrl, max: 1 }) : null;
  const out = new Map<Kind, KindCost>();
  try {
    const key = fs.readFileSync(path.join(dataDir, 'owner.key'), 'utf8').trim();
    const calls = await prepare(`http://127.0.0.1:${port}`, key, upstream);
    for (const kind of KINDS) await callsInParallel(WARMUP, CONCURRENCY, calls[kind]);
    // The PostgreSQL counters once quiet, and the server's idle rate over one more quiet stretch.
    const counters = async (): Promise<{ at: number; tx: number; tables: TableCounts }> => {
      if (!shared || !tables) return { at: performance.now(), tx: 0, tables: new Map() };
      await sleep(SETTLE_MS);
      return {
        at: performance.now(),
        tx: await postgresTransactions(backends.stats, backends.database),
        tables: await tableCounts(tables),
      };
    };
    let last = await counters();
    const quiet = await counters();
    const idlePerMs = shared ? (quiet.tx - last.tx) / (quiet.at - last.at) : 0;
    last = quiet;
    for (const kind of KINDS) {
      const count = kind === 'prediction' ? PREDICTIONS : CALLS;
      const cpu0 = sampleCpu(targets);
      const redis0 = shared ? await redisCommands(backends.redis) : 0;
      const started = performance.now();
      await callsInParallel(count, CONCURRENCY, calls[kind]);
      const seconds = (performance.now() - started) / 1000;
      const cpu1 = sampleCpu(targets);
      const redis1 = shared ? await redisCommands(backends.redis) : 0;
      const now = await counters();
      out.set(kind, {
        calls: count,
        rps: count / seconds,
        cpuUs: {
          prism: cpu1.prism - cpu0.prism,
          postgres: cpu1.postgres - cpu0.postgres,
          redis: cpu1.redis - cpu0.redis,
        },
        redisCommands: redis1 - redis0,
        transactions: now.tx - last.tx - idlePerMs * (now.at - last.at),
        tables: tableDelta(last.tables, now.tables),
      });
      last = now;
    }
  } finally {
    await tables?.end();
    await stopChild(server.child);
  }
  return out;
}

const SETTINGS: Setting[] = [
  { name: 'sqlite', label: '`prism serve`, SQLite' },
  { name: 'shared', label: '`prism serve`, PostgreSQL + Redis' },
];

const us = (value: number): string => value.toFixed(0);

/** Per table, rows inserted / updated / deleted and scans (sequential + index) per call, busiest first. */
function tableLines(cost: KindCost): string[] {
  const per = (n: number): string => (n / cost.calls).toFixed(2);
  const seen = (n: number): boolean => n / cost.calls >= 0.005;
  return [...cost.tables]
    .sort(([, a], [, b]) => b.ins + b.upd + b.del + b.scans - (a.ins + a.upd + a.del + a.scans))
    .map(([name, d]) => {
      const parts = [
        seen(d.ins) ? `${per(d.ins)} ins` : '',
        seen(d.upd) ? `${per(d.upd)} upd` : '',
        seen(d.del) ? `${per(d.del)} del` : '',
        seen(d.scans) ? `${per(d.scans)} scans` : '',
      ].filter(Boolean);
      return parts.length > 0 ? `${name} ${parts.join('/')}` : '';
    })
    .filter(Boolean);
}

/** The table's lines and the harness figures of each kind on each setting measured. */
function report(results: Map<Setting['name'], Map<Kind, KindCost>>): {
  notes: string[];
  figures: Record<string, number>;
} {
  const figures: Record<string, number> = {};
  const rows: string[] = [];
  const writes: string[] = [];
  for (const kind of KINDS) {
    const base = results.get('sqlite')?.get(kind);
    const baseTotal = base ? (base.cpuUs.prism + base.cpuUs.postgres + base.cpuUs.redis) / base.calls : 0;
    for (const setting of SETTINGS) {
      const cost = results.get(setting.name)?.get(kind);
      if (!cost) continue;
      const shared = setting.name === 'shared';
      const per = (n: number): number => n / cost.calls;
      const total = per(cost.cpuUs.prism + cost.cpuUs.postgres + cost.cpuUs.redis);
      const key = `${kind}.${setting.name}`;
      Object.assign(figures, {
        [`${key}.calls_per_s`]: cost.rps,
        [`${key}.cpu_us_per_call`]: total,
        [`${key}.prism_cpu_us_per_call`]: per(cost.cpuUs.prism),
        ...(shared
          ? {
              [`${key}.postgres_cpu_us_per_call`]: per(cost.cpuUs.postgres),
              [`${key}.redis_cpu_us_per_call`]: per(cost.cpuUs.redis),
              [`${key}.pg_transactions_per_call`]: per(cost.transactions),
              [`${key}.redis_commands_per_call`]: per(cost.redisCommands),
              [`${key}.cpu_ratio_vs_sqlite`]: total / baseTotal,
            }
          : {}),
      });
      rows.push(
        `| ${kind.replace(/_/g, ' ')} | ${setting.label} | ${cost.calls} | ${cost.rps.toFixed(0)} | ` +
          `${us(per(cost.cpuUs.prism))} | ${shared ? us(per(cost.cpuUs.postgres)) : '–'} | ` +
          `${shared ? us(per(cost.cpuUs.redis)) : '–'} | ${us(total)} | ` +
          `${shared ? `${(total / baseTotal).toFixed(2)}x` : '1.00x'} | ` +
          `${shared ? per(cost.transactions).toFixed(2) : '–'} | ${shared ? per(cost.redisCommands).toFixed(1) : '–'} |`,
      );
      if (shared) {
        const tables = tableLines(cost);
        writes.push(`- ${kind.replace(/_/g, ' ')}: ${tables.join(', ') || 'nothing'}`);
      }
    }
  }
  return {
    notes: [
      [
        '| call | setting | calls | calls/s | Prism µs | PostgreSQL µs | Redis µs | total µs | × SQLite | PG transactions | Redis commands |',
        '|---|---|---|---|---|---|---|---|---|---|---|',
        ...rows,
      ].join('\n'),
      ...(writes.length > 0
        ? [
            `per call on PostgreSQL, by table: rows inserted/updated/deleted and scans, sequential + index (pg_stat_user_tables):\n${writes.join('\n')}`,
          ]
        : []),
    ],
    figures,
  };
}

export async function callsBenchmarks(): Promise<GroupReport> {
  if (process.platform !== 'linux') return { notes: ['calls: skipped (reads /proc: Linux only)'] };
  const databaseUrl = process.env.PRISM_BENCH_DATABASE_URL ?? process.env.PRISM_TEST_DATABASE_URL;
  const fallbackRedisUrl = process.env.PRISM_BENCH_REDIS_URL ?? process.env.PRISM_TEST_REDIS_URL;
  const backends = databaseUrl ? await startBackends(databaseUrl, fallbackRedisUrl) : null;
  const upstream = await startScriptedUpstream();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-bench-calls-'));
  const modelsFile = path.join(dir, 'models.yaml');
  fs.writeFileSync(
    modelsFile,
    `upstreams:\n  - name: lab\n    base_url: ${upstream.baseUrl}\nmodels:\n` +
      '  - id: prism-orion-2\n    engine: { kind: upstream, upstream: lab, model: planner }\n' +
      '    capabilities: { supported_input_types: [text] }\n',
  );
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PRISM_LOG_LEVEL: 'warn',
    PRISM_MODELS_FILE: modelsFile,
    PRISM_RATE_LIMIT_PER_MINUTE: '100000000',
    PRISM_RATE_LIMIT_PER_HOUR: '100000000',
    PRISM_OWNER_CREDITS_USD: '100000',
    PRISM_OCR_WORKERS: '1',
    PRISM_DATABASE_URL: '',
    PRISM_REDIS_URL: '',
  };
  const results = new Map<Setting['name'], Map<Kind, KindCost>>();
  const loads: number[] = [];
  try {
    for (const setting of SETTINGS) {
      if (setting.name === 'shared' && !backends) continue;
      loads.push(os.loadavg()[0] ?? 0);
      const dataDir = path.join(dir, `data-${setting.name}`);
      results.set(setting.name, await measureSetting(setting, env, dataDir, backends, upstream));
    }
  } finally {
    await upstream.close();
    fs.rmSync(dir, { recursive: true, force: true });
    await backends?.close();
  }
  const { notes, figures } = report(results);
  const load = loads.reduce((a, b) => a + b, 0) / loads.length;
  return {
    notes: [
      `calls: per call, ${CONCURRENCY} at a time, ${CALLS} executions and MCP tool calls and ${PREDICTIONS} ` +
        `predictions after ${WARMUP} warm-up calls each, one process per setting, ${os.cpus().length} cores; load ` +
        `average ${load.toFixed(2)}; CPU in µs per call summed over the processes of each part`,
      ...notes,
      ...(backends ? [] : ['calls: PostgreSQL + Redis skipped (set PRISM_BENCH_DATABASE_URL to compare the backends)']),
    ],
    figures,
  };
}
