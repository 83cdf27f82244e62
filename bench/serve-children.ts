/**
 * The processes a cost-per-call bench runs against, started and stopped as children: `node` children (a Prism
 * server, an upstream) that are ready when they print a given line, a free loopback port, and the bench's own
 * backends (a database created on the given PostgreSQL server, a private redis-server when one is on the PATH).
 * Shared by the workers bench (workers.bench.ts) and the per-call bench of executions, MCP tool calls and
 * predictions (calls.bench.ts), which read their cost with process-cost.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { Redis } from 'ioredis';
import { Pool } from 'pg';

const ROOT = path.resolve(__dirname, '..');

export interface Child {
  child: ChildProcess;
  line: string;
}

/** Starts `node <args>` and resolves with the `count`th output line matching `ready`. */
export function startChild(args: string[], env: NodeJS.ProcessEnv, ready: RegExp, count = 1): Promise<Child> {
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

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The bench's own services: a database on the given server, a private redis-server when there is one. */
export interface Backends {
  databaseUrl: string;
  database: string;
  /** A connection to the server's maintenance database, for the statistics views. */
  stats: Pool;
  redisUrl: string;
  redisPid: number | null;
  redis: Redis;
  close(): Promise<void>;
}

export async function startBackends(serverUrl: string, fallbackRedisUrl: string | undefined): Promise<Backends | null> {
  const database = `prism_bench_${randomBytes(4).toString('hex')}`;
  const maintenance = new URL(serverUrl);
  maintenance.pathname = '/postgres';
  const stats = new Pool({ connectionString: maintenance.href, max: 1 });
  await stats.query(`CREATE DATABASE ${database}`);
  const databaseUrl = new URL(serverUrl);
  databaseUrl.pathname = `/${database}`;
  let redisChild: ChildProcess | null = null;
  let redisUrl = fallbackRedisUrl;
  try {
    const port = await freePort();
    redisChild = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    await new Promise<void>((resolve, reject) => {
      redisChild?.once('error', reject);
      setTimeout(resolve, 300);
    });
    redisUrl = `redis://127.0.0.1:${port}`;
  } catch {
    redisChild = null;
  }
  if (!redisUrl) {
    await stats.query(`DROP DATABASE ${database}`);
    await stats.end();
    return null;
  }
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 2 });
  await redis.connect();
  return {
    databaseUrl: databaseUrl.href,
    database,
    stats,
    redisUrl,
    redisPid: redisChild?.pid ?? null,
    redis,
    async close() {
      redis.disconnect();
      if (redisChild) await stopChild(redisChild);
      await stats.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await stats.end();
    },
  };
}

/** Waits until no connection to `database` is left (its backends have exited and published their statistics). */
export async function backendsGone(stats: Pool, database: string): Promise<void> {
  for (let i = 0; i < 100; i += 1) {
    const { rows } = await stats.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1', [
      database,
    ]);
    if (Number(rows[0]?.n) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
