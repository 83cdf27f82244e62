/**
 * A small pool of expensive, single-job workers (tesseract workers cost ~0.3 s and ~70 MB each to create).
 *
 * Workers are created lazily, only when a task waits and the pool is below its size, then reused; tasks beyond the
 * pool size wait in line per tenant (an organisation), and a free worker goes to the tenants in turn (round robin;
 * FIFO within one tenant), so a tenant with hundreds of queued pages delays another's single image by at most one
 * task per busy worker and tenant ahead of it. A worker whose task failed is destroyed rather than reused (it may be in a bad
 * state) and a fresh one is created on demand. `close()` stops accepting tasks, lets accepted ones finish, then
 * destroys every worker. Generic so it can be tested with fake workers.
 */

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
   */
  run<T>(task: (worker: W) => Promise<T>, tenant?: string): Promise<T>;
  /** Live workers plus those being created. */
  readonly live: number;
  /** Tasks accepted and not yet finished (running or queued). */
  readonly pending: number;
  /** Drains accepted tasks, then destroys every worker. Idempotent. */
  close(): Promise<void>;
}

interface Waiter<W> {
  resolve: (worker: W) => void;
  reject: (error: unknown) => void;
}

/** Builds an empty pool; no worker exists until the first task. */
export function createWorkerPool<W>(options: WorkerPoolOptions<W>): WorkerPool<W> {
  const size = Math.max(1, Math.floor(options.size));
  const idle: W[] = [];
  /** Waiting tasks per tenant; the map's order is the turn order (a served tenant moves to the back). */
  const waiting = new Map<string, Waiter<W>[]>();
  let waiters = 0;
  const inFlight = new Set<Promise<unknown>>();
  const destroying: Promise<void>[] = [];
  let live = 0;
  let closed = false;
  let closing: Promise<void> | null = null;

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

  const pump = (): void => {
    while (waiters > 0) {
      const worker = idle.pop();
      if (worker !== undefined) {
        nextWaiter()?.resolve(worker);
      } else if (live < size) {
        live += 1;
        const waiter = nextWaiter();
        options.create().then(
          (created) => waiter?.resolve(created),
          (error: unknown) => {
            live -= 1;
            waiter?.reject(error);
            pump();
          },
        );
      } else {
        return;
      }
    }
  };

  const acquire = (tenant: string): Promise<W> =>
    new Promise<W>((resolve, reject) => {
      const line = waiting.get(tenant);
      if (line) line.push({ resolve, reject });
      else waiting.set(tenant, [{ resolve, reject }]);
      waiters += 1;
      pump();
    });

  const release = (worker: W): void => {
    idle.push(worker);
    pump();
  };

  const execute = async <T>(task: (worker: W) => Promise<T>, tenant: string): Promise<T> => {
    const worker = await acquire(tenant);
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

  return {
    run<T>(task: (worker: W) => Promise<T>, tenant = ''): Promise<T> {
      if (closed) return Promise.reject(new Error('The worker pool is closed'));
      const job = execute(task, tenant);
      inFlight.add(job);
      const forget = (): void => void inFlight.delete(job);
      job.then(forget, forget);
      return job;
    },
    get live() {
      return live;
    },
    get pending() {
      return inFlight.size;
    },
    close(): Promise<void> {
      closed = true;
      closing ??= (async () => {
        while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
        for (const worker of idle.splice(0)) destroy(worker);
        await Promise.all(destroying);
      })();
      return closing;
    },
  };
}
