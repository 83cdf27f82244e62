/**
 * `prism serve --workers N`: N server processes on one machine (node:cluster), so the gateway uses every core.
 *
 * The primary accepts connections and deals them out round-robin; each worker is a whole replica (its own
 * container, its own in-flight and queue caps), so N > 1 needs the shared backends — PostgreSQL for records and
 * money, Redis for limits, the job queue and signals — and refuses to start without them: N processes on one SQLite
 * file and private memories would each keep their own rate limits, guest spend and queue. The first worker starts
 * alone (migrations, the owner bootstrap, the start-up sweep), the others once it listens. A worker that dies is
 * replaced (its queued jobs are taken over by the others after their lease); SIGTERM/SIGINT stop every worker
 * gracefully, then the primary.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Config } from '../config/config';

/** Workers that die this soon after starting count as a crash loop. */
const EARLY_EXIT_MS = 10_000;
const MAX_EARLY_EXITS = 5;

/** The settings N > 1 workers need that are missing, by environment variable name. */
export function missingSharedBackends(config: Config): string[] {
  const missing: string[] = [];
  if (!config.database.url) missing.push('PRISM_DATABASE_URL (postgres://…)');
  if (!config.redis.url) missing.push('PRISM_REDIS_URL (redis://…)');
  return missing;
}

/** Parses `--workers N` out of the serve command's arguments (1 when absent). */
export function workersArgument(args: readonly string[]): number {
  const at = args.findIndex((a) => a === '--workers' || a.startsWith('--workers='));
  if (at < 0) return 1;
  const arg = args[at] as string;
  const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : args[at + 1];
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new RangeError('--workers takes a whole number from 1 to 256');
  return n;
}

/**
 * Runs the primary: starts `n` workers (re-running this command in each) and keeps them running until a signal.
 * @returns the exit code.
 */
export async function runPrimary(n: number, log: (line: string) => void = (l) => console.error(l)): Promise<number> {
  const workers = new Set<Worker>();
  let stopping = false;
  let earlyExits = 0;
  let done!: (code: number) => void;
  const finished = new Promise<number>((resolve) => (done = resolve));

  const fork = (): Worker => {
    const worker = cluster.fork();
    const startedAt = Date.now();
    workers.add(worker);
    worker.once('exit', (code, signal) => {
      workers.delete(worker);
      if (stopping) {
        if (workers.size === 0) done(0);
        return;
      }
      log(`prism: worker ${worker.process.pid} exited (${signal ?? `code ${code}`}); starting another`);
      if (Date.now() - startedAt < EARLY_EXIT_MS && (earlyExits += 1) >= MAX_EARLY_EXITS) {
        log('prism: workers keep exiting at start; stopping');
        stop();
        return;
      }
      setTimeout(() => {
        if (!stopping) fork();
      }, 1000).unref();
    });
    return worker;
  };

  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    if (workers.size === 0) done(earlyExits >= MAX_EARLY_EXITS ? 1 : 0);
    for (const worker of workers) worker.process.kill('SIGTERM');
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);

  const first = fork();
  const listening = await new Promise<boolean>((resolve) => {
    first.once('listening', () => resolve(true));
    first.once('exit', () => resolve(false));
  });
  if (!listening) {
    log('prism: the first worker did not start; see its error above');
    stopping = true;
    return 1;
  }
  for (let i = 1; i < n && !stopping; i += 1) fork();
  log(`prism: ${n} workers (pids ${[...workers].map((w) => w.process.pid).join(', ')})`);
  const code = await finished;
  return earlyExits >= MAX_EARLY_EXITS ? 1 : code;
}

/** True in a worker process of `prism serve --workers N`. */
export const isClusterWorker = (): boolean => cluster.isWorker;
