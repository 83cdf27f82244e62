/**
 * The job queue shared by every replica, on Redis with BullMQ: a job queued on one replica runs on whichever has a
 * free slot, once, and a job whose replica died is taken over by another after its lease runs out.
 *
 * - Job id = `<kind>.<record id>`, so queuing the same record twice (a retry, a start-up resume on two replicas)
 *   adds one job, and one id under two kinds is two jobs, as in the in-process queue.
 * - A replica holds a lease (BullMQ's lock, `leaseMs`, renewed at half that) while its handler runs. A SIGKILLed
 *   replica stops renewing; the stalled check of any live replica (every `leaseMs`) puts the job back, and its next
 *   handler sees `redelivered`, so the service takes the `running` record over (from its checkpoint, for agents).
 * - A shutdown (`stopTaking`) fetches no more jobs and hands back, at once, every job whose handler returns after
 *   it began (those may have been cut short; a handler that sees a finished record does nothing).
 * - Completed jobs are removed, so a record's id can be queued again after a restart lost the record's work.
 *
 * BullMQ over pg-boss: pg-boss 10 (the last on Node 20) notices a dead worker only after `expireInSeconds` (15 min by
 * default; no heartbeat before v11), and Redis is here anyway for limits and signals. BullMQ is at-least-once, as
 * every queue is; the records' compare-and-set state changes make the work run once.
 */
import { Queue, UnrecoverableError, WaitingError, Worker, type Job as BullJob } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from '../../lib/logger';
import type { Job, JobHandler, JobQueue } from '../../jobs/job-queue';

export interface BullmqJobQueueOptions {
  redisUrl: string;
  /** Key prefix (the install's Redis prefix): `<prefix>bull:jobs:*`. */
  prefix: string;
  /** Handlers running at once on this replica. */
  concurrency: number;
  /** How long a replica's claim lasts without renewal; also the stalled-check interval. */
  leaseMs: number;
  logger: Logger;
  /** Queue name under the prefix (tests use their own). */
  name?: string;
}

interface JobData {
  id: string;
}

const IDLE_POLL_MS = 25;

export function createBullmqJobQueue(options: BullmqJobQueueOptions): JobQueue {
  const { logger } = options;
  const name = options.name ?? 'jobs';
  const prefix = `${options.prefix}bull`;
  const handlers = new Map<string, JobHandler>();
  const running = new Set<Promise<void>>();
  const adding = new Set<Promise<unknown>>();
  // BullMQ's blocking worker needs `maxRetriesPerRequest: null`; the producer fails fast instead.
  const producerConnection = new Redis(options.redisUrl, { maxRetriesPerRequest: 3, connectionName: 'prism-jobs' });
  const workerConnection = new Redis(options.redisUrl, {
    maxRetriesPerRequest: null,
    connectionName: 'prism-jobs-worker',
  });
  for (const connection of [producerConnection, workerConnection]) {
    connection.on('error', (error: Error) => logger.warn('job queue: Redis error', { error: error.message }));
  }
  const queue = new Queue<JobData>(name, { connection: producerConnection, prefix });
  let stopping = false;
  let closed = false;

  async function process(job: BullJob<JobData>, token?: string): Promise<void> {
    const run = handlers.get(job.name);
    if (!run) throw new UnrecoverableError(`no handler runs jobs of kind ${job.name}`);
    const task = run(job.data.id, { redelivered: job.attemptsStarted > 1 });
    running.add(task);
    try {
      await task;
    } finally {
      running.delete(task);
    }
    if (stopping && token !== undefined) {
      // Shutdown began while it ran: it may have been cut short. Another replica (or this one, restarted) runs it
      // again at once instead of after a lease; a finished record makes that run a no-op.
      await job.moveToWait(token);
      throw new WaitingError();
    }
  }

  const worker = new Worker<JobData>(name, process, {
    connection: workerConnection,
    prefix,
    autorun: false,
    concurrency: options.concurrency,
    lockDuration: options.leaseMs,
    stalledInterval: options.leaseMs,
    // The services' attempt counters decide when a run that keeps dying is given up; BullMQ only redelivers.
    maxStalledCount: 1000,
    removeOnComplete: { count: 0 },
    removeOnFail: { count: 1000 },
  });
  worker.on('failed', (job, error) => {
    if (error instanceof WaitingError || error.name === 'WaitingError') return;
    logger.error('job failed unexpectedly', { kind: job?.name, job: job?.data.id, error: error.message });
  });
  worker.on('error', (error) => logger.warn('job queue: worker error', { error: error.message }));

  return {
    handle(kind, run) {
      if (handlers.has(kind)) throw new Error(`jobs of kind ${kind} already have a handler`);
      handlers.set(kind, run);
    },
    enqueue(job: Job) {
      if (stopping) return;
      if (!handlers.has(job.kind)) throw new Error(`no handler runs jobs of kind ${job.kind}`);
      const added = queue
        .add(job.kind, { id: job.id }, { jobId: `${job.kind}.${job.id}`, removeOnComplete: true })
        .catch((error: unknown) =>
          logger.error('job could not be queued', { kind: job.kind, job: job.id, error: String(error) }),
        )
        .finally(() => adding.delete(added));
      adding.add(added);
    },
    size: () => running.size + adding.size,
    start() {
      if (stopping || worker.isRunning()) return;
      worker.run().catch((error: unknown) => logger.error('job queue stopped', { error: String(error) }));
    },
    async stopTaking() {
      stopping = true;
      await Promise.allSettled([...adding]);
      if (worker.isRunning()) await worker.pause(true);
    },
    async idle() {
      for (;;) {
        await Promise.allSettled([...adding]);
        const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
        if (running.size === 0 && Object.values(counts).every((n) => n === 0)) return;
        await new Promise((resolve) => setTimeout(resolve, IDLE_POLL_MS));
      }
    },
    async close(graceMs) {
      if (closed) return;
      closed = true;
      stopping = true;
      await Promise.allSettled([...adding]);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...running]),
        new Promise((resolve) => (timer = setTimeout(resolve, graceMs))),
      ]);
      clearTimeout(timer);
      // Handlers still running past the grace keep their jobs' leases until they lapse: another replica takes over.
      await worker.close(true);
      await queue.close();
      producerConnection.disconnect();
      workerConnection.disconnect();
    },
  };
}
