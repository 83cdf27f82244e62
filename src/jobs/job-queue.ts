/**
 * The in-process job queue: runs batch work (predictions with `batch: true`) a few at a time, in order.
 *
 * Jobs are ids; the durable state lives in the store, so a restart re-enqueues what was unfinished. `close()`
 * stops taking work and waits for running jobs up to a grace period. A Redis/BullMQ queue can implement the same
 * interface when several replicas share work.
 */
import type { Logger } from '../lib/logger';

export interface JobQueue {
  enqueue(id: string): void;
  /** Jobs waiting plus running. */
  size(): number;
  /** Resolves when nothing is waiting or running (for tests and shutdown). */
  idle(): Promise<void>;
  close(graceMs: number): Promise<void>;
}

export function createJobQueue(options: {
  concurrency: number;
  run: (id: string) => Promise<void>;
  logger: Logger;
}): JobQueue {
  const waiting: string[] = [];
  const queued = new Set<string>();
  const running = new Set<Promise<void>>();
  let closed = false;
  let idleWaiters: (() => void)[] = [];

  const settleIdle = (): void => {
    if (waiting.length === 0 && running.size === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  };

  const pump = (): void => {
    while (!closed && running.size < options.concurrency && waiting.length > 0) {
      const id = waiting.shift() as string;
      queued.delete(id);
      const job = options
        .run(id)
        .catch((error: unknown) => options.logger.error('job failed unexpectedly', { job: id, error: String(error) }))
        .finally(() => {
          running.delete(job);
          pump();
          settleIdle();
        });
      running.add(job);
    }
  };

  return {
    enqueue(id) {
      if (closed || queued.has(id)) return;
      queued.add(id);
      waiting.push(id);
      setImmediate(pump);
    },
    size: () => waiting.length + running.size,
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
