/**
 * Gateway throughput of `prism serve --workers 2` against one process, as a ratio measured in one run: 50 clients
 * make non-streamed chat completions to an upstream that answers in 20 ms, first against `prism serve`, then against
 * `--workers 2`, then both again (interleaved rounds, so the host's drifting load falls on both alike). Both run on
 * the shared backends (PostgreSQL and Redis: `--workers` requires them, and the single process gets the same ones so
 * the ratio measures the workers, not the backends). The upstream and this load generator are processes too: on a
 * 2-core machine they share the cores with the workers, which caps the ratio below 2.
 *
 * Needs `PRISM_BENCH_DATABASE_URL` (or `PRISM_TEST_DATABASE_URL`) and `PRISM_BENCH_REDIS_URL` (or
 * `PRISM_TEST_REDIS_URL`); without them it reports that it was skipped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import readline from 'node:readline';
import { Pool } from 'pg';
import { deleteKeys } from '../test/helpers/redis';

const ROOT = path.resolve(__dirname, '..');
const UPSTREAM_SERVICE_MS = 20;
const CONCURRENCY = 50;
const WARMUP = 500;
const MEASURED = 2_000;
const ROUNDS = 2;

interface Child {
  child: ChildProcess;
  line: string;
}

/** Starts `node <args>` and resolves with the `count`th output line matching `ready`. */
function startChild(args: string[], env: NodeJS.ProcessEnv, ready: RegExp, count = 1): Promise<Child> {
  let seen = 0;
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`child did not start: ${args.join(' ')}`)), 60_000);
    for (const stream of [child.stdout, child.stderr]) {
      readline.createInterface({ input: stream as NodeJS.ReadableStream }).on('line', (line) => {
        if (!ready.test(line) || (seen += 1) < count) return;
        clearTimeout(timer);
        resolve({ child, line });
      });
    }
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child exited with ${code}: ${args.join(' ')}`));
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Calls per second of CONCURRENCY clients over `measured` calls after `warmup`. */
async function throughput(url: string, key: string): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const body = JSON.stringify({ model: 'bench-slow', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });
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
  let issued = 0;
  let started = 0;
  const worker = async (): Promise<void> => {
    while (issued < WARMUP + MEASURED) {
      if (issued === WARMUP) started = performance.now();
      issued += 1;
      await send();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  agent.destroy();
  return MEASURED / ((performance.now() - started) / 1000);
}

async function dropSchema(url: string, schema: string): Promise<void> {
  const pool = new Pool({ connectionString: url });
  try {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}_checkpoints" CASCADE`);
  } finally {
    await pool.end();
  }
}

export async function workersBenchmarks(): Promise<string[]> {
  const databaseUrl = process.env.PRISM_BENCH_DATABASE_URL ?? process.env.PRISM_TEST_DATABASE_URL;
  const redisUrl = process.env.PRISM_BENCH_REDIS_URL ?? process.env.PRISM_TEST_REDIS_URL;
  if (!databaseUrl || !redisUrl) {
    return ['workers: skipped (set PRISM_BENCH_DATABASE_URL and PRISM_BENCH_REDIS_URL to compare --workers 2 with 1)'];
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
  const schema = `bench_workers_${randomBytes(3).toString('hex')}`;
  const env = {
    ...process.env,
    PRISM_DATA_DIR: path.join(dir, 'data'),
    PRISM_LOG_LEVEL: 'warn',
    PRISM_MODELS_FILE: modelsFile,
    PRISM_RATE_LIMIT_PER_MINUTE: '100000000',
    PRISM_RATE_LIMIT_PER_HOUR: '100000000',
    PRISM_OWNER_CREDITS_USD: '100000',
    PRISM_DATABASE_URL: databaseUrl,
    PRISM_DATABASE_SCHEMA: schema,
    PRISM_REDIS_URL: redisUrl,
    PRISM_REDIS_PREFIX: `${schema}:`,
  };
  const rps: Record<1 | 2, number[]> = { 1: [], 2: [] };
  try {
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const workers of [1, 2] as const) {
        const port = await freePort();
        const args = ['bin/prism.js', 'serve', ...(workers > 1 ? ['--workers', String(workers)] : [])];
        // Every worker prints its own `listening on` line.
        const server = await startChild(args, { ...env, PORT: String(port) }, /listening on/, workers);
        try {
          const key = fs.readFileSync(path.join(dir, 'data', 'owner.key'), 'utf8').trim();
          rps[workers].push(await throughput(`http://127.0.0.1:${port}`, key));
        } finally {
          await stopChild(server.child);
        }
      }
    }
  } finally {
    await stopChild(upstream.child);
    fs.rmSync(dir, { recursive: true, force: true });
    await dropSchema(databaseUrl, schema);
    await deleteKeys(redisUrl, `${schema}:`);
  }
  const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
  const one = mean(rps[1]);
  const two = mean(rps[2]);
  return [
    `workers (${CONCURRENCY} clients, upstream ${UPSTREAM_SERVICE_MS} ms, ${os.cpus().length} cores, PostgreSQL + Redis, ` +
      `${ROUNDS} interleaved rounds of ${MEASURED} calls): prism serve ${one.toFixed(0)} calls/s, ` +
      `--workers 2 ${two.toFixed(0)} calls/s, ratio ${(two / one).toFixed(2)}x`,
  ];
}
