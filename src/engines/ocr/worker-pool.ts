/**
 * A small pool of expensive, single-job workers (tesseract workers cost ~0.3 s and ~70 MB each to create).
 *
 * Workers are created lazily, only when a task waits and the pool is below its size, then reused; tasks beyond the
 * pool size wait in line per tenant (an organisation), and a free worker goes to the tenants in turn (round robin;
 * FIFO within one tenant), so a tenant with hundreds of queued pages delays another's single image by at most one
 * task per busy worker and tenant ahead of it. A worker whose task failed is destroyed rather than reused (it may be in a bad
 * state) and a fresh one is created on demand. `close()` stops accepting tasks, lets accepted ones finish, then
 * destroys every worker. Generic so it can be tested with fake workers.
 *
 * A task may come with a cancel signal (its request's client left, or its deadline answered first). Until the task
 * has a worker, an abort takes it out of its tenant's line and rejects it at once with `WorkCancelledError`; it never
 * runs and the worker goes to the next waiter. If its worker was being created, the new worker joins the pool for
 * the next waiter rather than leaking. Once a task runs it finishes: tesseract and onnxruntime cannot be interrupted.
 */
import { WorkCancelledError, type CancelSignal } from '../../lib/cancel';

export interface WorkerPoolOptions<W> {
  /** Maximum number of live workers (≥ 1). */
  size: number;
  create: () => Promise<W>;
  destroy: (worker: W) => Promise<void>;
}

export interface WorkerPool<W> {
  /**
   * Runs `task` on a free worker, waiting for one if all are busy. Rejects once the pool is closed.
   * @param tenant whose task it is; waiting tasks of different tenants take turns (default: one shared tenant).
   * @param signal aborting it before the task has a worker rejects the task with `WorkCancelledError` (it never
   *   runs); a task already running finishes.
   */
  run<T>(task: (worker: W) => Promise<T>, tenant?: string, signal?: CancelSignal): Promise<T>;
  /** Live workers plus those being created. */
  readonly live: number;
  /** Tasks accepted and not yet finished (running or queued). */
  readonly pending: number;
  /** Tasks that got a worker and ran (finished or failed), since the pool was built. */
  readonly ran: number;
  /** Tasks rejected by their cancel signal before they got a worker, since the pool was built. */
  readonly cancelled: number;
  /** Drains accepted tasks, then destroys every worker. Idempotent. */
  close(): Promise<void>;
}

interface Waiter<W> {
  resolve: (worker: W) => void;
  reject: (error: unknown) => void;
  tenant: string;
  signal: CancelSignal | undefined;
  /** In its tenant's line (`waiting`), having a worker created for it (`creating`), or answered (`done`). */
  state: 'waiting' | 'creating' | 'done';
  onAbort: (() => void) | null;
}

/** Builds an empty pool; no worker exists until the first task. */
export function createWorkerPool<W>(options: WorkerPoolOptions<W>): WorkerPool<W> {
  const size = Math.max(1, Math.floor(options.size));
  const idle: W[] = [];
  /** Waiting tasks per tenant; the map's order is the turn order (a served tenant moves to the back). */
  const waiting = new Map<string, Waiter<W>[]>();
  let waiters = 0;
  const inFlight = new Set<Promise<unknown>>();
  /** Workers being created (a cancelled waiter's creation outlives its task, and `close` must wait for it too). */
  const creating = new Set<Promise<void>>();
  const destroying: Promise<void>[] = [];
  let live = 0;
  let ran = 0;
  let cancelled = 0;
  let closed = false;

  const destroy = (worker: W): void => {
    live -= 1;
    destroying.push(options.destroy(worker).catch(() => undefined));
  };

  /** The first waiter of the tenant whose turn it is; that tenant goes to the back of the turn order. */
  const nextWaiter = (): Waiter<W> | undefined => {
    const turn = waiting.entries().next();
    if (turn.done) return undefined;
    const [tenant, line] = turn.value;
    const waiter = line.shift();
    waiting.delete(tenant);
    if (line.length > 0) waiting.set(tenant, line);
    waiters -= 1;
    return waiter;
  };

  /** Hands `worker` to `waiter`, which stops listening for its abort. */
  const grant = (waiter: Waiter<W>, worker: W): void => {
    waiter.state = 'done';
    if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
    waiter.resolve(worker);
  };

  const pump = (): void => {
    while (waiters > 0) {
      const worker = idle.pop();
      if (worker !== undefined) {
        const waiter = nextWaiter();
        if (waiter) grant(waiter, worker);
      } else if (live < size) {
        live += 1;
        const waiter = nextWaiter();
        if (waiter) waiter.state = 'creating';
        const creation = options.create().then(
          (created) => {
            // A waiter cancelled while its worker was being created has been answered: the worker joins the pool.
            if (waiter?.state === 'creating') grant(waiter, created);
            else release(created);
          },
          (error: unknown) => {
            live -= 1;
            if (waiter?.state === 'creating') {
              waiter.state = 'done';
              if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
              waiter.reject(error);
            }
            pump();
          },
        );
        creating.add(creation);
        const settled = (): void => void creating.delete(creation);
        creation.then(settled, settled);
      } else {
        return;
      }
    }
  };

  /** Takes a cancelled waiter out of its tenant's line (or away from the worker being created) and rejects it. */
  const cancel = (waiter: Waiter<W>): void => {
    if (waiter.state === 'done') return;
    if (waiter.state === 'waiting') {
      const line = waiting.get(waiter.tenant);
      const at = line?.indexOf(waiter) ?? -1;
      if (line && at >= 0) {
        line.splice(at, 1);
        waiters -= 1;
        if (line.length === 0) waiting.delete(waiter.tenant);
      }
    }
    waiter.state = 'done';
    cancelled += 1;
    waiter.reject(new WorkCancelledError());
  };

  const acquire = (tenant: string, signal: CancelSignal | undefined): Promise<W> =>
    new Promise<W>((resolve, reject) => {
      const waiter: Waiter<W> = { resolve, reject, tenant, signal, state: 'waiting', onAbort: null };
      const line = waiting.get(tenant);
      if (line) line.push(waiter);
      else waiting.set(tenant, [waiter]);
      waiters += 1;
      pump();
      if (signal && waiter.state !== 'done') {
        waiter.onAbort = () => cancel(waiter);
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
    });

  const release = (worker: W): void => {
    idle.push(worker);
    pump();
  };

  const execute = async <T>(
    task: (worker: W) => Promise<T>,
    tenant: string,
    signal: CancelSignal | undefined,
  ): Promise<T> => {
    const worker = await acquire(tenant, signal);
    if (signal?.aborted) {
      // Aborted between getting the worker and starting: the task still has not run, so it does not.
      cancelled += 1;
      release(worker);
      throw new WorkCancelledError();
    }
    ran += 1;
    let result: T;
    try {
      result = await task(worker);
    } catch (error) {
      destroy(worker);
      pump();
      throw error;
    }
    release(worker);
    return result;
  };

  return poolApi({
    execute,
    inFlight,
    creating,
    idle,
    destroying,
    destroy,
    counts: () => ({ live, ran, cancelled }),
    isClosed: () => closed,
    markClosed: () => void (closed = true),
    cancelledBeforeStart: () => void (cancelled += 1),
  });
}

/** What the pool's public face reads and drives of its state. */
interface PoolState<W> {
  execute: <T>(task: (worker: W) => Promise<T>, tenant: string, signal: CancelSignal | undefined) => Promise<T>;
  inFlight: Set<Promise<unknown>>;
  creating: Set<Promise<void>>;
  idle: W[];
  destroying: Promise<void>[];
  destroy: (worker: W) => void;
  counts: () => { live: number; ran: number; cancelled: number };
  isClosed: () => boolean;
  markClosed: () => void;
  cancelledBeforeStart: () => void;
}

/** The pool as its callers see it: run (tracked until it settles), the counts, and close (drain, then destroy). */
function poolApi<W>(state: PoolState<W>): WorkerPool<W> {
  let closing: Promise<void> | null = null;
  return {
    run<T>(task: (worker: W) => Promise<T>, tenant = '', signal?: CancelSignal): Promise<T> {
      if (state.isClosed()) return Promise.reject(new Error('The worker pool is closed'));
      if (signal?.aborted) {
        state.cancelledBeforeStart();
        return Promise.reject(new WorkCancelledError());
      }
      const job = state.execute(task, tenant, signal);
      state.inFlight.add(job);
      const forget = (): void => void state.inFlight.delete(job);
      job.then(forget, forget);
      return job;
    },
    get live() {
      return state.counts().live;
    },
    get pending() {
      return state.inFlight.size;
    },
    get ran() {
      return state.counts().ran;
    },
    get cancelled() {
      return state.counts().cancelled;
    },
    close(): Promise<void> {
      state.markClosed();
      closing ??= (async () => {
        while (state.inFlight.size > 0 || state.creating.size > 0) {
          await Promise.allSettled([...state.inFlight, ...state.creating]);
        }
        for (const worker of state.idle.splice(0)) state.destroy(worker);
        await Promise.all(state.destroying);
      })();
      return closing;
    },
  };
}
