/**
 * The job queue's contract: background work (batch predictions, agent executions, evaluations) run a few at a time,
 * in order, whatever its kind.
 *
 * A job is a `{kind, id}`; each kind has one handler, registered by the composition root once the service that runs
 * it exists, so the queue knows no service and no id carries its kind in a prefix. The durable state lives in the
 * stores, so a restart re-enqueues what was unfinished. `close()` stops taking work and waits for running jobs up to
 * a grace period. One process runs src/backend/local/job-queue.ts; several replicas src/backend/redis/job-queue.ts
 * (BullMQ, with leases).
 *
 * Every queue is at-least-once: a handler may see the same id again (a replica died mid-job, a shutdown handed the
 * job back), so handlers start work with a compare-and-set on the record and treat a finished record as done.
 */
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
