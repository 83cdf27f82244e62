import { createWorkerPool } from '../../../src/engines/ocr/worker-pool';

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
});
