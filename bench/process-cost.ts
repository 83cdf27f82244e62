/**
 * What a call costs on the server side, counted where it is spent: CPU time of every process that serves it (the
 * Prism process and its workers, the PostgreSQL processes of the bench's own database plus the server's shared
 * background processes, a private redis-server), read from /proc; PostgreSQL transactions from
 * `pg_stat_database`; Redis commands from `INFO commandstats`. The workers bench (workers.bench.ts) samples these
 * before and after a measured stretch of calls and divides by the calls.
 *
 * Linux only (/proc). A process that exits between two samples takes its CPU time with it; the bench keeps its
 * connections open, so its backends live for the whole stretch.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';

/** Clock ticks per second of /proc's utime and stime. */
const TICKS_PER_S = ((): number => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

interface ProcInfo {
  pid: number;
  ppid: number;
  /** User + system CPU, microseconds. */
  cpuUs: number;
  /** The command line (a PostgreSQL backend's is its title: `postgres: 15/main: user db host(port) idle`). */
  title: string;
}

/** Every process /proc shows now (those that vanish while read are skipped). */
function processes(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name is in parentheses and may hold spaces: the fields that follow start after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]);
      const title = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      out.push({ pid: Number(entry), ppid: Number(fields[1]), cpuUs: (ticks * 1e6) / TICKS_PER_S, title });
    } catch {
      // gone
    }
  }
  return out;
}

/** CPU microseconds so far, by part of the deployment. */
export interface CpuSample {
  prism: number;
  postgres: number;
  redis: number;
}

/** Which processes belong to which part. */
export interface CostTargets {
  /** The Prism process started by the bench; its descendants (cluster workers) count too. */
  prismPid: number;
  /** The bench's own database: only its backends count, plus the server's background processes. */
  database: string | null;
  /** The private redis-server's pid, or null. */
  redisPid: number | null;
}

/** Is `title` a PostgreSQL process the bench's calls cost: a backend of `database`, or a shared background one. */
function isOurPostgres(title: string, database: string): boolean {
  if (!title.startsWith('postgres:')) return false;
  const backend = /\s\S+\s\S+\s(\d+\.\d+\.\d+\.\d+\(\d+\)|\[local\])/.exec(title);
  if (!backend) return true;
  return title.includes(` ${database} `);
}

/** CPU time of each part now. */
export function sampleCpu(targets: CostTargets): CpuSample {
  const all = processes();
  const children = new Map<number, number[]>();
  for (const p of all) {
    const siblings = children.get(p.ppid);
    if (siblings) siblings.push(p.pid);
    else children.set(p.ppid, [p.pid]);
  }
  const prismPids = new Set<number>();
  const stack = [targets.prismPid];
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    if (prismPids.has(pid)) continue;
    prismPids.add(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  const sample: CpuSample = { prism: 0, postgres: 0, redis: 0 };
  for (const p of all) {
    if (prismPids.has(p.pid)) sample.prism += p.cpuUs;
    else if (targets.database && isOurPostgres(p.title, targets.database)) sample.postgres += p.cpuUs;
    else if (p.pid === targets.redisPid) sample.redis += p.cpuUs;
  }
  return sample;
}

/** Transactions committed and rolled back in `database` so far (as the server's statistics show them). */
export async function postgresTransactions(pool: Pool, database: string): Promise<number> {
  await pool.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await pool.query<{ n: string }>(
    'SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1',
    [database],
  );
  return Number(rows[0]?.n ?? 0);
}

/** Commands the Redis server has run so far, INFO itself left out. */
export async function redisCommands(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats');
  let calls = 0;
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (match[1] !== 'info') calls += Number(match[2]);
  }
  return calls;
}
