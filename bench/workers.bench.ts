/**
 * What scale-out costs per gateway call, and what a second worker buys: 50 clients make chat completions (not
 * streamed, then streamed) to an upstream that answers in 20 ms, against four settings in interleaved rounds (so
 * the host's drifting load falls on all alike): `prism serve` on SQLite, `prism serve` on PostgreSQL + Redis,
 * `prism serve --workers 2` on PostgreSQL + Redis, and one process on PostgreSQL + Redis with half the clients (the
 * load each of two workers sees: how much of a second worker's extra cost per call is each process batching less).
 * For each it prints calls/s and, per call, the CPU time of every
 * server-side process (Prism and its workers, the PostgreSQL processes of the bench's own database and the server's
 * background ones, a private redis-server started for the bench), the PostgreSQL transactions and the Redis
 * commands (bench/process-cost.ts), plus each setting's CPU per call as a ratio of the SQLite process's.
 *
 * Transactions are read from `pg_stat_database`, which backends publish lazily (up to seconds after the fact): they
 * are counted over a server's whole life (start, calls, stop; the backends publish on exit), less a life with no
 * calls, divided by the calls. CPU and Redis commands are sampled around the measured calls only.
 *
 * The upstream and this load generator are processes too: on a 2-core machine they share the cores with the
 * workers, which caps the throughput ratio below 2. Needs `PRISM_BENCH_DATABASE_URL` (or `PRISM_TEST_DATABASE_URL`)
 * for a server on which it may create a database; without it, it reports that it was skipped. Redis is a private
 * `redis-server` when one is on the PATH, else `PRISM_BENCH_REDIS_URL` (or `PRISM_TEST_REDIS_URL`), whose CPU is then
 * not counted. Linux only (/proc).
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { postgresTransactions, redisCommands, sampleCpu, type CostTargets, type CpuSample } from './process-cost';
import { callsInParallel, type GroupReport } from './harness';
import { backendsGone, freePort, startBackends, startChild, stopChild, type Backends } from './serve-children';
const UPSTREAM_SERVICE_MS = 20;
const CONCURRENCY = 50;
/** `PRISM_BENCH_WORKERS_CALLS` / `PRISM_BENCH_WORKERS_ROUNDS` shorten a run on a loaded machine (defaults below). */
const WARMUP = 500;
const MEASURED = Number(process.env.PRISM_BENCH_WORKERS_CALLS) || 3_000;
const ROUNDS = Number(process.env.PRISM_BENCH_WORKERS_ROUNDS) || 2;
/** How long an idle server's CPU is sampled (after IDLE_SETTLE_MS from its start) for its idle cost. */
const IDLE_SETTLE_MS = 1_000;
const IDLE_SAMPLE_MS = 5_000;

/** `clients` clients make `count` calls; resolves when all are answered. */
async function load(url: string, key: string, count: number, stream: boolean, clients: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const body = JSON.stringify({
    model: 'bench-slow',
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 8,
    ...(stream ? { stream: true } : {}),
  });
  const send = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const req = http.request(
        `${url}/v1/compat/chat/completions`,
        {
          method: 'POST',
          agent,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          const ok = (res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300;
          res.on('end', () => (ok ? resolve() : reject(new Error(`status ${res.statusCode}`))));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  await callsInParallel(count, clients, send);
  agent.destroy();
}

interface Setting {
  name: string;
  label: string;
  workers: 1 | 2;
  shared: boolean;
  /** Clients of the measured calls (CONCURRENCY unless said). */
  clients?: number;
}

const SETTINGS: Setting[] = [
  { name: 'sqlite', label: '`prism serve`, SQLite', workers: 1, shared: false },
  { name: 'shared', label: '`prism serve`, PostgreSQL + Redis', workers: 1, shared: true },
  { name: 'shared_workers2', label: '`prism serve --workers 2`, PostgreSQL + Redis', workers: 2, shared: true },
  // What one process costs per call at the load each of two workers sees (half the clients): the part of a second
  // worker's extra cost that comes from each process batching less (fewer calls per event-loop turn, smaller group
  // commits), apart from the two processes sharing the cores.
  {
    name: 'shared_half',
    label: `\`prism serve\`, PostgreSQL + Redis, ${CONCURRENCY / 2} clients`,
    workers: 1,
    shared: true,
    clients: CONCURRENCY / 2,
  },
];

/** What one measured stretch of calls cost. */
interface Measured {
  rps: number;
  cpuUs: CpuSample;
  redisCommands: number;
  /** Transactions of the server's whole life (start, warm-up and measured calls, stop). */
  lifeTransactions: number;
  calls: number;
  /** A life without calls: CPU of the Prism processes over IDLE_SAMPLE_MS once started, µs per second. */
  idlePrismUsPerS: number;
  /** ... and Redis commands they sent meanwhile, per second. */
  idleRedisPerS: number;
}

/**
 * One life of a server: start it, warm up, sample, make the measured calls, sample, stop. `calls: false` only
 * starts and stops it (the transactions a life costs without calls).
 */
async function serverLife(
  setting: Setting,
  env: NodeJS.ProcessEnv,
  dataDir: string,
  backends: Backends,
  options: { stream: boolean; calls: boolean },
): Promise<Measured> {
  const before = setting.shared ? await postgresTransactions(backends.stats, backends.database) : 0;
  const port = await freePort();
  const args = ['bin/prism.js', 'serve', ...(setting.workers > 1 ? ['--workers', String(setting.workers)] : [])];
  const settingEnv = setting.shared
    ? { ...env, PRISM_DATABASE_URL: backends.databaseUrl, PRISM_REDIS_URL: backends.redisUrl }
    : env;
  // Every worker prints its own `listening on` line.
  const server = await startChild(
    args,
    { ...settingEnv, PORT: String(port), PRISM_DATA_DIR: dataDir },
    /listening on/,
    setting.workers,
  );
  const targets: CostTargets = {
    prismPid: server.child.pid ?? 0,
    database: setting.shared ? backends.database : null,
    redisPid: setting.shared ? backends.redisPid : null,
  };
  const zero: CpuSample = { prism: 0, postgres: 0, redis: 0 };
  let measured: Omit<Measured, 'lifeTransactions'> = {
    rps: 0,
    cpuUs: zero,
    redisCommands: 0,
    calls: 0,
    idlePrismUsPerS: 0,
    idleRedisPerS: 0,
  };
  try {
    if (!options.calls) {
      await new Promise((resolve) => setTimeout(resolve, IDLE_SETTLE_MS));
      const cpu0 = sampleCpu(targets);
      const redis0 = setting.shared ? await redisCommands(backends.redis) : 0;
      await new Promise((resolve) => setTimeout(resolve, IDLE_SAMPLE_MS));
      const cpu1 = sampleCpu(targets);
      const redis1 = setting.shared ? await redisCommands(backends.redis) : 0;
      measured.idlePrismUsPerS = ((cpu1.prism - cpu0.prism) * 1000) / IDLE_SAMPLE_MS;
      // The bench's own INFO between the two samples is not counted by redisCommands; nothing else talks to it.
      measured.idleRedisPerS = ((redis1 - redis0) * 1000) / IDLE_SAMPLE_MS;
    }
    if (options.calls) {
      const url = `http://127.0.0.1:${port}`;
      const key = fs.readFileSync(path.join(dataDir, 'owner.key'), 'utf8').trim();
      const clients = setting.clients ?? CONCURRENCY;
      await load(url, key, WARMUP, options.stream, clients);
      const cpu0 = sampleCpu(targets);
      const redis0 = setting.shared ? await redisCommands(backends.redis) : 0;
      const started = performance.now();
      await load(url, key, MEASURED, options.stream, clients);
      const seconds = (performance.now() - started) / 1000;
      const cpu1 = sampleCpu(targets);
      const redis1 = setting.shared ? await redisCommands(backends.redis) : 0;
      measured = {
        rps: MEASURED / seconds,
        cpuUs: {
          prism: cpu1.prism - cpu0.prism,
          postgres: cpu1.postgres - cpu0.postgres,
          redis: cpu1.redis - cpu0.redis,
        },
        redisCommands: redis1 - redis0,
        calls: WARMUP + MEASURED,
        idlePrismUsPerS: 0,
        idleRedisPerS: 0,
      };
    }
  } finally {
    await stopChild(server.child);
  }
  if (!setting.shared) return { ...measured, lifeTransactions: 0 };
  await backendsGone(backends.stats, backends.database);
  return { ...measured, lifeTransactions: (await postgresTransactions(backends.stats, backends.database)) - before };
}

const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
const us = (value: number): string => value.toFixed(0);

export async function workersBenchmarks(): Promise<GroupReport> {
  const databaseUrl = process.env.PRISM_BENCH_DATABASE_URL ?? process.env.PRISM_TEST_DATABASE_URL;
  const fallbackRedisUrl = process.env.PRISM_BENCH_REDIS_URL ?? process.env.PRISM_TEST_REDIS_URL;
  if (!databaseUrl || process.platform !== 'linux') {
    return { notes: ['workers: skipped (set PRISM_BENCH_DATABASE_URL, on Linux, to compare the settings)'] };
  }
  const backends = await startBackends(databaseUrl, fallbackRedisUrl);
  if (!backends) {
    return { notes: ['workers: skipped (no redis-server on the PATH and no PRISM_BENCH_REDIS_URL)'] };
  }
  const upstream = await startChild(
    ['-r', './bin/register-ts.js', 'bench/upstream-child.ts', String(UPSTREAM_SERVICE_MS)],
    process.env,
    /^http/,
  );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-bench-workers-'));
  const modelsFile = path.join(dir, 'models.yaml');
  fs.writeFileSync(
    modelsFile,
    `upstreams:\n  - { name: lab, base_url: "${upstream.line.trim()}", provider: bench }\nmodels:\n` +
      '  - id: bench-slow\n    engine: { kind: upstream, upstream: lab, model: bench-upstream-slow }\n' +
      '    supported_parameters: [stream, stream_options, max_tokens]\n    pricing: { prompt: 1, completion: 1 }\n',
  );
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PRISM_LOG_LEVEL: 'warn',
    PRISM_MODELS_FILE: modelsFile,
    PRISM_RATE_LIMIT_PER_MINUTE: '100000000',
    PRISM_RATE_LIMIT_PER_HOUR: '100000000',
    PRISM_OWNER_CREDITS_USD: '100000',
    PRISM_DATABASE_URL: '',
    PRISM_REDIS_URL: '',
  };
  const dataDirOf = (setting: Setting): string => path.join(dir, setting.shared ? 'data-shared' : 'data-sqlite');
  const runs = new Map<string, Measured[]>();
  const idle = new Map<number, number>();
  /** Idle lives' cost by worker count (the first, migrating life is not one of them). */
  const idleCost = new Map<number, { prismUsPerS: number; redisPerS: number }>();
  const load1: number[] = [];
  try {
    // The first life migrates the database; then a life without calls per worker count, to subtract.
    const shared = SETTINGS.filter((s) => s.shared && s.clients === undefined);
    for (const [i, setting] of [shared[0] as Setting, ...shared].entries()) {
      const life = await serverLife(setting, env, dataDirOf(setting), backends, { stream: false, calls: false });
      idle.set(setting.workers, life.lifeTransactions);
      if (i > 0) idleCost.set(setting.workers, { prismUsPerS: life.idlePrismUsPerS, redisPerS: life.idleRedisPerS });
    }
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const setting of SETTINGS) {
        for (const stream of [false, true]) {
          load1.push(os.loadavg()[0] ?? 0);
          const life = await serverLife(setting, env, dataDirOf(setting), backends, { stream, calls: true });
          const key = `${setting.name}${stream ? '.stream' : ''}`;
          runs.set(key, [...(runs.get(key) ?? []), life]);
        }
      }
    }
  } finally {
    await stopChild(upstream.child);
    fs.rmSync(dir, { recursive: true, force: true });
    await backends.close();
  }
  const figures: Record<string, number> = {};
  const rows: string[] = [];
  const sqliteCpu: Record<string, number> = {};
  for (const setting of SETTINGS) {
    for (const stream of [false, true]) {
      const key = `${setting.name}${stream ? '.stream' : ''}`;
      const lives = runs.get(key) ?? [];
      const perCall = (pick: (m: Measured) => number): number => mean(lives.map((m) => pick(m) / MEASURED));
      const prism = perCall((m) => m.cpuUs.prism);
      const postgres = perCall((m) => m.cpuUs.postgres);
      const redis = perCall((m) => m.cpuUs.redis);
      const total = prism + postgres + redis;
      const transactions = mean(
        lives.map((m) => (m.lifeTransactions - (idle.get(setting.workers) ?? 0)) / Math.max(1, m.calls)),
      );
      const commands = perCall((m) => m.redisCommands);
      const rps = mean(lives.map((m) => m.rps));
      if (!setting.shared) sqliteCpu[stream ? 'stream' : 'plain'] = total;
      const ratio = total / (sqliteCpu[stream ? 'stream' : 'plain'] ?? total);
      Object.assign(figures, {
        [`${key}.calls_per_s`]: rps,
        [`${key}.cpu_us_per_call`]: total,
        [`${key}.cpu_ratio_vs_sqlite`]: ratio,
        ...(setting.shared ? { [`${key}.pg_transactions_per_call`]: transactions } : {}),
        ...(setting.shared ? { [`${key}.redis_commands_per_call`]: commands } : {}),
      });
      rows.push(
        `| ${setting.label} | ${stream ? 'yes' : 'no'} | ${rps.toFixed(0)} | ${us(prism)} | ` +
          `${setting.shared ? us(postgres) : '–'} | ${setting.shared ? us(redis) : '–'} | ${us(total)} | ` +
          `${ratio.toFixed(2)}x | ${setting.shared ? transactions.toFixed(2) : '–'} | ` +
          `${setting.shared ? commands.toFixed(1) : '–'} |`,
      );
    }
  }
  const one = figures['shared.cpu_us_per_call'] ?? 0;
  const two = figures['shared_workers2.cpu_us_per_call'] ?? 0;
  figures['workers2_vs_1.cpu_ratio'] = two / one;
  const half = figures['shared_half.cpu_us_per_call'] ?? 0;
  figures['half_load_vs_1.cpu_ratio'] = half / one;
  const idleLines: string[] = [];
  for (const [workers, cost] of idleCost) {
    figures[`idle.workers${workers}.prism_cpu_ms_per_s`] = cost.prismUsPerS / 1000;
    figures[`idle.workers${workers}.redis_commands_per_s`] = cost.redisPerS;
    idleLines.push(
      `${workers} worker${workers > 1 ? 's' : ''}: ${(cost.prismUsPerS / 1000).toFixed(2)} ms CPU/s (Prism, all ` +
        `processes), ${cost.redisPerS.toFixed(1)} Redis commands/s`,
    );
  }
  figures['workers2_vs_1.throughput_ratio'] =
    (figures['shared_workers2.calls_per_s'] ?? 0) / (figures['shared.calls_per_s'] ?? 1);
  return {
    notes: [
      `workers: ${CONCURRENCY} clients, upstream ${UPSTREAM_SERVICE_MS} ms, ${os.cpus().length} cores, ${ROUNDS} ` +
        `interleaved rounds of ${MEASURED} calls after ${WARMUP} warm-up calls; load average ` +
        `${mean(load1).toFixed(2)}; CPU in µs per call summed over the processes of each part`,
      [
        '| setting | streamed | calls/s | Prism µs | PostgreSQL µs | Redis µs | total µs | × SQLite | PG transactions | Redis commands |',
        '|---|---|---|---|---|---|---|---|---|---|',
        ...rows,
      ].join('\n'),
      `--workers 2 against one process on the same backends: CPU per call ${(two / one).toFixed(2)}x, ` +
        `throughput ${(figures['workers2_vs_1.throughput_ratio'] ?? 0).toFixed(2)}x; one process with half the ` +
        `clients (each worker's share) ${(half / one).toFixed(2)}x`,
      `idle cost on PostgreSQL + Redis over ${IDLE_SAMPLE_MS / 1000} s without calls: ${idleLines.join('; ')}`,
    ],
    figures,
  };
}
