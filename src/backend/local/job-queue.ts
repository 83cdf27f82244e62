/**
 * The in-process job queue (one replica): runs background work a few at a time, in order, whatever its kind; the
 * contract, and what at-least-once means for handlers, is src/jobs/job-queue.ts.
 */
import type { Job, JobHandler, JobQueue } from '../../jobs/job-queue';
import type { Logger } from '../../lib/logger';

export function createJobQueue(options: { concurrency: number; logger: Logger }): JobQueue {
  const handlers = new Map<string, JobHandler>();
  const waiting: Job[] = [];
  const queued = new Set<string>();
  const running = new Set<Promise<void>>();
  let closed = false;
  let idleWaiters: (() => void)[] = [];
  const keyOf = (job: Job): string => `${job.kind}\u0000${job.id}`;

  const settleIdle = (): void => {
    if (waiting.length === 0 && running.size === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  };

  const pump = (): void => {
    while (!closed && running.size < options.concurrency && waiting.length > 0) {
      const job = waiting.shift() as Job;
      queued.delete(keyOf(job));
      const run = handlers.get(job.kind) as JobHandler;
      const task = run(job.id, { redelivered: false })
        .catch((error: unknown) =>
          options.logger.error('job failed unexpectedly', { kind: job.kind, job: job.id, error: String(error) }),
        )
        .finally(() => {
          running.delete(task);
          pump();
          settleIdle();
        });
      running.add(task);
    }
  };

  return {
    handle(kind, run) {
      if (handlers.has(kind)) throw new Error(`jobs of kind ${kind} already have a handler`);
      handlers.set(kind, run);
    },
    enqueue(job) {
      if (closed) return;
      if (!handlers.has(job.kind)) throw new Error(`no handler runs jobs of kind ${job.kind}`);
      const key = keyOf(job);
      if (queued.has(key)) return;
      queued.add(key);
      waiting.push({ kind: job.kind, id: job.id });
      setImmediate(pump);
    },
    size: () => waiting.length + running.size,
    start: () => undefined,
    async stopTaking() {
      closed = true;
      waiting.length = 0;
      queued.clear();
    },
    idle() {
      if (waiting.length === 0 && running.size === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    async close(graceMs) {
      closed = true;
      waiting.length = 0;
      queued.clear();
      if (running.size === 0) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...running]),
        new Promise((resolve) => (timer = setTimeout(resolve, graceMs))),
      ]);
      clearTimeout(timer);
    },
  };
}
