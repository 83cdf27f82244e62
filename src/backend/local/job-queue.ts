/**
 * The in-process job queue: runs background work (batch predictions, agent executions; evaluations next) a few at a
 * time, in order, whatever its kind.
 *
 * A job is a `{kind, id}`; each kind has one handler, registered by the composition root once the service that runs
 * it exists, so the queue knows no service and no id carries its kind in a prefix. The durable state lives in the
 * stores, so a restart re-enqueues what was unfinished. `close()` stops taking work and waits for running jobs up to
 * a grace period. With several replicas, bullmq.job-queue.ts implements the same interface on Redis, with leases.
 *
 * Every queue is at-least-once: a handler may see the same id again (a replica died mid-job, a shutdown handed the
 * job back), so handlers start work with a compare-and-set on the record and treat a finished record as done.
 */
import type { Logger } from '../lib/logger';

/** One unit of background work: which handler runs it, and the record it runs on. */
export interface Job {
  kind: string;
  id: string;
}

/** How a job reached its handler. */
export interface JobDelivery {
  /**
   * True when an earlier delivery of this job started and its replica lost it (died, its lease ran out, or it shut
   * down mid-job): the record may still say `running`, and the handler takes it over.
   */
  redelivered: boolean;
}

export type JobHandler = (id: string, delivery: JobDelivery) => Promise<void>;

export interface JobQueue {
  /** Names the handler of a kind; one per kind, registered before the first job of that kind is enqueued. */
  handle(kind: string, run: JobHandler): void;
  /**
   * Queues a job unless the same one is already waiting; ignored after close.
   * @throws Error when no handler runs jobs of that kind (a wiring mistake, not a caller's).
   */
  enqueue(job: Job): void;
  /** Jobs waiting plus running on this replica. */
  size(): number;
  /** Starts taking jobs queued by any replica (a shared queue); the in-process queue runs as jobs arrive. */
  start(): void;
  /**
   * The first step of a shutdown: takes no new jobs, and jobs whose handlers return from now on may have been cut
   * short, so a shared queue hands them back for another replica (their handlers see `redelivered`).
   */
  stopTaking(): Promise<void>;
  /** Resolves when nothing is waiting or running (for tests and shutdown). */
  idle(): Promise<void>;
  close(graceMs: number): Promise<void>;
}

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
