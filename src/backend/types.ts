/**
 * The backend seam's contract: everything Prism keeps outside one request, as the configuration chose it.
 *
 * Records and checkpoints come from one database (SQLite in the data folder, or PostgreSQL with
 * `PRISM_DATABASE_URL`); bytes from one blob store (the local folder, or S3 with `PRISM_BLOB_URL`); the job queue
 * and the limit windows from process memory, or from Redis with `PRISM_REDIS_URL`. The container asks for a
 * Backend and never names a concrete class of any of them.
 */
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { BlobStore } from '../blobs/types';
import type { GuestSpendStore, HoldStore, PayerLock, RateLimitStore } from '../metering/ports';
import type { JobQueue } from '../jobs/job-queue';
import type { CloseStep } from '../lib/close-all';
import type { Logger } from '../lib/logger';
import type { SignalBus } from '../signals/signal-bus';
import type { Stores } from '../stores/types';

export type Dialect = 'sqlite' | 'postgres';

/** What a records database gives: every store and the LangGraph checkpointer on the same database. */
export interface RecordsBackend {
  dialect: Dialect;
  stores: Stores;
  checkpointer: BaseCheckpointSaver;
  /** Work that starts with a long-running server (SQLite: WAL checkpoints on a worker thread). */
  startBackground(): Promise<void>;
  /**
   * Runs `work` while no other process sharing this database runs work of the same name (PostgreSQL: a session
   * advisory lock; SQLite has one serving process and just runs it). For start-up steps every replica takes, such as
   * creating the owner on an empty database.
   */
  exclusive<T>(name: string, work: () => Promise<T>): Promise<T>;
  /** In the order things were opened; the container runs them in reverse. */
  closers: CloseStep[];
}

/**
 * State several processes must share to agree: the job queue, the limit windows, the guests' spend and holds, the
 * payer lane and the signals between replicas. In memory by default (backend/local/shared-state.ts); on Redis with
 * `PRISM_REDIS_URL` (backend/redis/shared-state.ts).
 */
export interface SharedState {
  /** True when other replicas share this state (Redis): running work then belongs to the replica holding it. */
  sharedAcrossReplicas: boolean;
  /** The queue background work (predictions, executions, evaluations) runs on. */
  createJobQueue(options: { concurrency: number; logger: Logger }): JobQueue;
  /** The windows of one limiter (`gateway`, `decisions`): limiters with different limits keep apart. */
  rateLimitStore(limiter: string): RateLimitStore;
  /** The guests' daily spend counters (one per process in memory; exact across replicas in Redis). */
  guestSpendStore(): GuestSpendStore;
  /** Money held by guests' calls still running (one store for every biller and the guard). */
  guestHolds: HoldStore;
  /** The guests' lane: their reservations and settlements run one at a time, across replicas on Redis. */
  payerLock: PayerLock;
  /** Signals between replicas (MCP cancels). */
  signals: SignalBus;
  closers: CloseStep[];
}

export interface Backend extends RecordsBackend {
  blobs: BlobStore;
  shared: SharedState;
}
