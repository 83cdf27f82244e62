import { createWorkerPool } from '../../../src/engines/ocr/worker-pool';
import { CancelController, WorkCancelledError } from '../../../src/lib/cancel';

interface FakeWorker {
  id: number;
}

/** A promise with its resolve/reject exposed, so tests decide when work finishes (no timers). */
function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

type Gate = ReturnType<typeof deferred<void>>;

const flush = async (): Promise<void> => {
  for (let i = 0; i < 10; i += 1) await Promise.resolve();
};

function fakePool(size: number) {
  const created: FakeWorker[] = [];
  const destroyed: number[] = [];
  const pool = createWorkerPool<FakeWorker>({
    size,
    create: async () => {
      const worker = { id: created.length + 1 };
      created.push(worker);
      return worker;
    },
    destroy: async (worker) => void destroyed.push(worker.id),
  });
  return { pool, created, destroyed };
}

describe('worker pool', () => {
  it('creates workers only when tasks need them and reuses idle ones', async () => {
    const { pool, created } = fakePool(3);
    expect(created).toHaveLength(0);
    expect(await pool.run(async (w) => w.id)).toBe(1);
    expect(await pool.run(async (w) => w.id)).toBe(1);
    expect(created).toHaveLength(1);
    await pool.close();
  });

  it('never runs more tasks than its size and serves waiting tasks in order', async () => {
    const { pool, created } = fakePool(2);
    const gates = [deferred(), deferred(), deferred(), deferred()];
    const started: number[] = [];
    const results = gates.map((gate, i) =>
      pool.run(async (w) => {
        started.push(i);
        await gate.promise;
        return w.id;
      }),
    );
    await flush();
    expect(started).toEqual([0, 1]);
    expect(pool.pending).toBe(4);
    gates[1]?.resolve();
    await flush();
    expect(started).toEqual([0, 1, 2]);
    gates[0]?.resolve();
    await flush();
    expect(started).toEqual([0, 1, 2, 3]);
    gates[2]?.resolve();
    gates[3]?.resolve();
    const ids = await Promise.all(results);
    expect(created).toHaveLength(2);
    expect(new Set(ids)).toEqual(new Set([1, 2]));
    await pool.close();
  });

  it('destroys a worker whose task failed and replaces it on demand', async () => {
    const { pool, created, destroyed } = fakePool(1);
    await expect(pool.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(destroyed).toEqual([1]);
    expect(await pool.run(async (w) => w.id)).toBe(2);
    expect(created).toHaveLength(2);
    await pool.close();
  });

  it('passes a creation failure to the waiting task and keeps serving the queue', async () => {
    let attempts = 0;
    const pool = createWorkerPool<FakeWorker>({
      size: 1,
      create: async () => {
        attempts += 1;
        if (attempts === 1) throw new Error('no worker');
        return { id: attempts };
      },
      destroy: async () => undefined,
    });
    const first = pool.run(async (w) => w.id);
    const second = pool.run(async (w) => w.id);
    await expect(first).rejects.toThrow('no worker');
    await expect(second).resolves.toBe(2);
    expect(pool.live).toBe(1);
    await pool.close();
  });

  it('close drains accepted tasks, destroys every worker and refuses new tasks', async () => {
    const { pool, destroyed } = fakePool(2);
    const gate = deferred();
    const running = pool.run(async (w) => {
      await gate.promise;
      return w.id;
    });
    const queued = pool.run(async (w) => w.id);
    await flush();
    const closing = pool.close();
    await expect(pool.run(async () => 1)).rejects.toThrow('closed');
    gate.resolve();
    await expect(running).resolves.toBe(1);
    await expect(queued).resolves.toBe(2);
    await closing;
    expect(destroyed.sort()).toEqual([1, 2]);
    expect(pool.live).toBe(0);
    await pool.close();
  });

  describe('per-tenant turns (one organisation cannot starve another)', () => {
    /** Queues `count` tasks of `tenant` that each wait for their own gate; records the order they start in. */
    function queue(
      pool: ReturnType<typeof fakePool>['pool'],
      started: string[],
      tenant: string,
      count: number,
    ): { gates: Gate[]; done: Promise<unknown>[] } {
      const gates = Array.from({ length: count }, () => deferred());
      const done = gates.map((gate, i) =>
        pool.run(async () => {
          started.push(`${tenant}${i}`);
          await gate.promise;
        }, tenant),
      );
      return { gates, done };
    }

    /** Finishes started tasks one at a time, in start order, until every task has run. */
    async function drain(started: string[], byTenant: Record<string, Gate[]>): Promise<void> {
      const total = Object.values(byTenant).reduce((n, gates) => n + gates.length, 0);
      for (let next = 0; next < total; next += 1) {
        await new Promise((resolve) => setImmediate(resolve));
        const name = started[next];
        if (name === undefined) throw new Error(`only ${started.length} of ${total} tasks started: ${started.join()}`);
        const tenant = name.replace(/\d+$/, '');
        byTenant[tenant]?.[Number(name.slice(tenant.length))]?.resolve();
      }
    }

    it('serves a single task of another tenant right after the running one, not after 500 queued pages', async () => {
      const { pool } = fakePool(1);
      const started: string[] = [];
      const big = queue(pool, started, 'bulk', 500);
      await flush();
      const small = queue(pool, started, 'small', 1);
      await drain(started, { bulk: big.gates, small: small.gates });
      await Promise.all([...big.done, ...small.done]);
      // bulk0 held the worker when small0 arrived; bulk1 was already first in line; then it is small's turn.
      expect(started.indexOf('small0')).toBeLessThanOrEqual(2);
      expect(started).toHaveLength(501);
      await pool.close();
    });

    it('takes turns between three tenants (FIFO within each) with two workers', async () => {
      const { pool } = fakePool(2);
      const started: string[] = [];
      const a = queue(pool, started, 'a', 6);
      const b = queue(pool, started, 'b', 3);
      const c = queue(pool, started, 'c', 2);
      await drain(started, { a: a.gates, b: b.gates, c: c.gates });
      await Promise.all([...a.done, ...b.done, ...c.done]);
      // a0 and a1 took the two workers; a's line was first to wait, then b's and c's: a, b, c, a, b, c, a, b, a.
      expect(started).toEqual(['a0', 'a1', 'a2', 'b0', 'c0', 'a3', 'b1', 'c1', 'a4', 'b2', 'a5']);
      await pool.close();
    });

    it('runs untagged tasks as one shared tenant, in order', async () => {
      const { pool } = fakePool(1);
      const order: number[] = [];
      await Promise.all([0, 1, 2].map((i) => pool.run(async () => void order.push(i))));
      expect(order).toEqual([0, 1, 2]);
      await pool.close();
    });
  });

  describe('cancel signals (work nobody wants any more)', () => {
    it('rejects a waiting task whose signal aborts at once; it never runs and the next tenant gets the worker', async () => {
      const { pool, created } = fakePool(1);
      const gate = deferred();
      const started: string[] = [];
      const running = pool.run(async () => {
        started.push('a0');
        await gate.promise;
        return 'a0';
      }, 'a');
      const cancel = new CancelController();
      const doomed = pool.run(async () => void started.push('a1'), 'a', cancel.signal);
      const other = pool.run(async () => {
        started.push('b0');
        return 'b0';
      }, 'b');
      await flush();
      expect(pool.pending).toBe(3);
      cancel.abort();
      await expect(doomed).rejects.toBeInstanceOf(WorkCancelledError);
      expect(pool.pending).toBe(2);
      expect(pool.cancelled).toBe(1);
      gate.resolve();
      await expect(running).resolves.toBe('a0');
      await expect(other).resolves.toBe('b0');
      expect(started).toEqual(['a0', 'b0']);
      expect(pool.ran).toBe(2);
      expect(created).toHaveLength(1);
      await pool.close();
    });

    it('removes a cancelled task from the middle of its line; the tasks around it keep their order', async () => {
      const { pool } = fakePool(1);
      const gate = deferred();
      const order: number[] = [];
      const first = pool.run(async () => {
        await gate.promise;
        order.push(0);
      });
      const cancel = new CancelController();
      const rest = [1, 2, 3].map((i) =>
        pool.run(async () => void order.push(i), '', i === 2 ? cancel.signal : undefined),
      );
      await flush();
      cancel.abort();
      gate.resolve();
      await first;
      const settled = await Promise.allSettled(rest);
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(order).toEqual([0, 1, 3]);
      await pool.close();
    });

    it('rejects a task whose signal is already aborted without queueing it or creating a worker', async () => {
      const { pool, created } = fakePool(1);
      const cancel = new CancelController();
      cancel.abort();
      let ran = false;
      await expect(pool.run(async () => void (ran = true), 't', cancel.signal)).rejects.toBeInstanceOf(
        WorkCancelledError,
      );
      expect(ran).toBe(false);
      expect(pool.pending).toBe(0);
      expect(pool.live).toBe(0);
      expect(created).toHaveLength(0);
      await pool.close();
    });

    it('accepts a real AbortSignal', async () => {
      const { pool } = fakePool(1);
      const gate = deferred();
      const running = pool.run(async () => gate.promise);
      const controller = new AbortController();
      const waiting = pool.run(async () => 1, '', controller.signal);
      await flush();
      controller.abort();
      await expect(waiting).rejects.toBeInstanceOf(WorkCancelledError);
      gate.resolve();
      await running;
      await pool.close();
    });

    it('gives a worker created for a task cancelled meanwhile back to the pool (no leak), for the next task', async () => {
      const creating = deferred<FakeWorker>();
      const destroyed: number[] = [];
      let creations = 0;
      const pool = createWorkerPool<FakeWorker>({
        size: 1,
        create: () => {
          creations += 1;
          return creating.promise;
        },
        destroy: async (worker) => void destroyed.push(worker.id),
      });
      const cancel = new CancelController();
      let ran = false;
      const doomed = pool.run(async () => void (ran = true), 'a', cancel.signal);
      await flush();
      expect(pool.live).toBe(1); // being created
      cancel.abort();
      await expect(doomed).rejects.toBeInstanceOf(WorkCancelledError);
      creating.resolve({ id: 7 });
      await flush();
      expect(ran).toBe(false);
      expect(pool.live).toBe(1);
      expect(pool.pending).toBe(0);
      // The worker is idle in the pool: the next task gets it without another creation.
      await expect(pool.run(async (w) => w.id, 'b')).resolves.toBe(7);
      expect(creations).toBe(1);
      await pool.close();
      expect(destroyed).toEqual([7]);
      expect(pool.live).toBe(0);
    });

    it('waits on close for a worker still being created for a cancelled task, then destroys it', async () => {
      const creating = deferred<FakeWorker>();
      const destroyed: number[] = [];
      const pool = createWorkerPool<FakeWorker>({
        size: 1,
        create: () => creating.promise,
        destroy: async (worker) => void destroyed.push(worker.id),
      });
      const cancel = new CancelController();
      const doomed = pool.run(async () => 'doomed', 'a', cancel.signal);
      await flush();
      cancel.abort();
      await expect(doomed).rejects.toBeInstanceOf(WorkCancelledError);
      expect(pool.pending).toBe(0);
      const closing = pool.close();
      creating.resolve({ id: 9 });
      await closing;
      expect(destroyed).toEqual([9]);
      expect(pool.live).toBe(0);
    });

    it('gives a worker created for a cancelled task to the task waiting behind it', async () => {
      const creating = deferred<FakeWorker>();
      const pool = createWorkerPool<FakeWorker>({
        size: 1,
        create: () => creating.promise,
        destroy: async () => undefined,
      });
      const cancel = new CancelController();
      const doomed = pool.run(async () => 'doomed', 'a', cancel.signal);
      const next = pool.run(async (w) => w.id, 'b');
      await flush();
      cancel.abort();
      await expect(doomed).rejects.toBeInstanceOf(WorkCancelledError);
      creating.resolve({ id: 3 });
      await expect(next).resolves.toBe(3);
      expect(pool.live).toBe(1);
      await pool.close();
    });

    it('lets a running task finish when its signal aborts', async () => {
      const { pool } = fakePool(1);
      const gate = deferred();
      const cancel = new CancelController();
      const running = pool.run(
        async (w) => {
          await gate.promise;
          return w.id;
        },
        't',
        cancel.signal,
      );
      await flush();
      cancel.abort();
      gate.resolve();
      await expect(running).resolves.toBe(1);
      expect(pool.cancelled).toBe(0);
      expect(pool.ran).toBe(1);
      await pool.close();
    });
  });
});
