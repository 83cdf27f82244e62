import { AppError } from '../../../src/domain/errors';
import { createRequestQueue } from '../../../src/gateway/request-queue';

describe('request queue', () => {
  it('runs at most maxInFlight, hands slots over in FIFO order, and refuses beyond maxWaiting with 429', async () => {
    const queue = createRequestQueue({ maxInFlight: 2, maxWaiting: 2 });
    const r1 = await queue.acquire();
    const r2 = await queue.acquire();
    const order: string[] = [];
    const w1 = queue.acquire().then((release) => (order.push('w1'), release));
    const w2 = queue.acquire().then((release) => (order.push('w2'), release));
    expect([queue.inFlight, queue.waiting]).toEqual([2, 2]);

    const refused = await queue.acquire().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ status: 429, code: 'queue_full', retryAfterSeconds: 60 });

    r1();
    r1(); // a second release is harmless
    const w1Release = await w1;
    expect(order).toEqual(['w1']);
    r2();
    const w2Release = await w2;
    expect(order).toEqual(['w1', 'w2']);
    expect([queue.inFlight, queue.waiting]).toEqual([2, 0]);
    w1Release();
    w2Release();
    expect(queue.inFlight).toBe(0);
  });

  it('drops a waiter whose client disconnects, without taking a slot', async () => {
    const queue = createRequestQueue({ maxInFlight: 1 });
    const release = await queue.acquire();
    const controller = new AbortController();
    const waiting = queue.acquire(controller.signal);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'client_disconnected' });
    expect(queue.waiting).toBe(0);
    release();
    expect(queue.inFlight).toBe(0);
  });

  it('releases the slot however the work ends', async () => {
    const queue = createRequestQueue({ maxInFlight: 1 });
    await expect(queue.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(queue.run(async () => 7)).resolves.toBe(7);
    expect(queue.inFlight).toBe(0);
  });
});
