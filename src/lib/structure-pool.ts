/**
 * A pool of worker threads for work on caller-supplied structure that can take more than a few milliseconds
 * (compiling a large JSON schema with ajv), so the event loop stays free: while one request's schema compiles,
 * `/health` and every other request are answered.
 *
 * The work budget (work-budget.ts) bounds what a request may ask for; this bounds what one piece of it may use
 * while it runs. Each worker is started with V8 `resourceLimits` (a heap cap) and each job has a deadline: a worker
 * that runs out of heap or past the deadline is terminated (its memory goes with its isolate) and a fresh one is
 * started for the next job, and the job is rejected with {@link WorkBudgetExceeded} naming `worker_heap_mb` or
 * `worker_ms`. Jobs beyond the pool's size wait in line (FIFO). Workers start when first needed and are unref'd
 * while idle: an idle pool keeps no process alive, a busy one does until its job answers; `close()` terminates
 * them.
 *
 * The worker runs structure-worker.ts (through bin/register-ts.js when running from the TypeScript sources, as
 * the server and the tests do; the built .js directly otherwise).
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Logger } from './logger';
import { WorkBudgetExceeded } from './work-budget';

export interface StructurePoolOptions {
  /** Worker threads at most (≥ 1). */
  size: number;
  /** Heap cap of each worker (V8 old generation), MB. */
  heapMb: number;
  /** How long one job may run on its worker, ms. */
  deadlineMs: number;
  logger?: Logger;
}

export interface StructurePoolStats {
  /** Workers alive now. */
  live: number;
  /** Jobs that ran to an answer. */
  ran: number;
  /** Workers terminated for overrunning their heap or a deadline (or dying), each replaced on the next job. */
  replaced: number;
  /** Jobs on a worker now. */
  running: number;
  /** Jobs waiting for a worker. */
  waiting: number;
}

export interface StructurePool {
  /**
   * Runs the worker task `task` (see structure-worker.ts) on `payload`.
   * @throws WorkBudgetExceeded (`worker_ms` / `worker_heap_mb`, for `caller`) when its worker overran.
   */
  run<T>(task: string, payload: unknown, caller: 'anonymous' | 'keyed'): Promise<T>;
  stats(): StructurePoolStats;
  /**
   * The longest payload text a job may carry: an eighth of a worker's heap. V8 stops a worker cleanly when its
   * heap fills up gradually, but a single parse larger than the heap aborts the whole process, so callers keep
   * what they send well under the cap (and bounded in objects).
   */
  readonly maxPayloadChars: number;
  /** Rejects waiting jobs and terminates every worker. Idempotent. */
  close(): Promise<void>;
}

interface Job {
  task: string;
  payload: unknown;
  caller: 'anonymous' | 'keyed';
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

interface Thread {
  worker: Worker;
  job: Job | null;
  timer: NodeJS.Timeout | null;
  /** Set once the thread is being terminated: it takes no further job. */
  gone: boolean;
}

// Plain JavaScript (eval'd), so the worker needs no loader to start; it then loads the TypeScript entry itself.
const BOOT = `
const { workerData } = require('node:worker_threads');
if (workerData.register) require(workerData.register);
require(workerData.entry);
`;

const ext = path.extname(__filename);
const ENTRY = path.join(__dirname, `structure-worker${ext}`);
const REGISTER = ext === '.ts' ? path.join(__dirname, '..', '..', 'bin', 'register-ts.js') : null;

/** Builds an empty pool; no thread starts until the first job. */
export function createStructurePool(options: StructurePoolOptions): StructurePool {
  const size = Math.max(1, Math.floor(options.size));
  const threads = new Set<Thread>();
  const queue: Job[] = [];
  let ran = 0;
  let replaced = 0;
  let closed = false;

  const finish = (thread: Thread): Job | null => {
    const job = thread.job;
    thread.job = null;
    thread.worker.unref();
    if (thread.timer) clearTimeout(thread.timer);
    thread.timer = null;
    return job;
  };

  /** Terminates `thread` (its job, if any, gets `error`) and lets the queue start a fresh one. */
  const retire = (thread: Thread, error: unknown, why: string): void => {
    if (thread.gone) return;
    thread.gone = true;
    threads.delete(thread);
    const job = finish(thread);
    if (!closed) {
      replaced += 1;
      options.logger?.warn('structure worker replaced', { why, task: job?.task });
    }
    job?.reject(error);
    void thread.worker.terminate().catch(() => undefined);
    pump();
  };

  const start = (): Thread => {
    const worker = new Worker(BOOT, {
      eval: true,
      workerData: { entry: ENTRY, register: REGISTER },
      // The parent's flags (--import tsx, inspector) are not needed by the worker and would slow its start.
      execArgv: [],
      resourceLimits: {
        maxOldGenerationSizeMb: options.heapMb,
        maxYoungGenerationSizeMb: Math.max(4, Math.min(48, Math.floor(options.heapMb / 4))),
        stackSizeMb: 4,
      },
    });
    worker.unref();
    const thread: Thread = { worker, job: null, timer: null, gone: false };
    worker.on('message', (message: { result?: unknown; error?: string }) => {
      const job = finish(thread);
      if (!job) return;
      ran += 1;
      if (message.error !== undefined) job.reject(new Error(message.error));
      else job.resolve(message.result);
      pump();
    });
    worker.on('error', (error: Error & { code?: string }) => {
      const caller = thread.job?.caller ?? 'keyed';
      const outOfMemory = error.code === 'ERR_WORKER_OUT_OF_MEMORY';
      retire(
        thread,
        outOfMemory ? new WorkBudgetExceeded('worker_heap_mb', options.heapMb, caller) : error,
        outOfMemory ? 'heap limit' : 'worker error',
      );
    });
    worker.on('exit', () => retire(thread, new Error('the structure worker stopped'), 'exited'));
    threads.add(thread);
    return thread;
  };

  const assign = (thread: Thread, job: Job): void => {
    thread.job = job;
    // Held while it works, so a process with nothing else to do (a `prism` command) waits for the answer.
    thread.worker.ref();
    thread.timer = setTimeout(
      () => retire(thread, new WorkBudgetExceeded('worker_ms', options.deadlineMs, job.caller), 'deadline'),
      options.deadlineMs,
    );
    thread.timer.unref();
    thread.worker.postMessage({ task: job.task, payload: job.payload });
  };

  const pump = (): void => {
    while (queue.length > 0 && !closed) {
      let free: Thread | undefined;
      for (const thread of threads) {
        if (!thread.job && !thread.gone) {
          free = thread;
          break;
        }
      }
      if (!free && threads.size < size) free = start();
      if (!free) return;
      assign(free, queue.shift() as Job);
    }
  };

  return {
    run<T>(task: string, payload: unknown, caller: 'anonymous' | 'keyed'): Promise<T> {
      if (closed) return Promise.reject(new Error('The structure pool is closed'));
      return new Promise<T>((resolve, reject) => {
        queue.push({ task, payload, caller, resolve: resolve as (value: unknown) => void, reject });
        pump();
      });
    },
    maxPayloadChars: Math.floor((options.heapMb * 1024 * 1024) / 8),
    stats: () => ({
      live: threads.size,
      ran,
      replaced,
      running: [...threads].filter((thread) => thread.job !== null).length,
      waiting: queue.length,
    }),
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      for (const job of queue.splice(0)) job.reject(new Error('The structure pool is closed'));
      const stopping = [...threads].map((thread) => {
        const exited = new Promise<void>((resolve) => thread.worker.once('exit', () => resolve()));
        retire(thread, new Error('The structure pool is closed'), 'closed');
        return exited;
      });
      await Promise.all(stopping);
    },
  };
}
