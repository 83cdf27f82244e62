import { AppError } from '../../../src/domain/errors';
import { createRequestQueue } from '../../../src/metering/request-queue';

describe('request queue', () => {
  it('runs at most maxInFlight, hands slots over in FIFO order, and refuses beyond maxWaiting with 429', async () => {
    const queue = createRequestQueue({ maxInFlight: { upstream: 2, local: 1 }, maxWaiting: 2 });
    const r1 = await queue.acquire('upstream');
    const r2 = await queue.acquire('upstream');
    const order: string[] = [];
    const w1 = queue.acquire('upstream').then((release) => (order.push('w1'), release));
    const w2 = queue.acquire('upstream').then((release) => (order.push('w2'), release));
    expect([queue.inFlight(), queue.waiting]).toEqual([2, 2]);

    const refused = await queue.acquire('upstream').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ status: 429, code: 'queue_full', retryAfterSeconds: 60 });

    r1();
    r1(); // a second release is harmless
    const w1Release = await w1;
    expect(order).toEqual(['w1']);
    r2();
    const w2Release = await w2;
    expect(order).toEqual(['w1', 'w2']);
    expect([queue.inFlight(), queue.waiting]).toEqual([2, 0]);
    w1Release();
    w2Release();
    expect(queue.inFlight()).toBe(0);
  });

  it('limits each lane on its own but counts waiters across lanes against one budget', async () => {
    const queue = createRequestQueue({ maxInFlight: { upstream: 3, local: 1 }, maxWaiting: 1 });
    const local = await queue.acquire('local');
    // A busy local lane does not hold up upstream calls.
    const upstream = await Promise.all([queue.acquire('upstream'), queue.acquire('upstream')]);
    expect([queue.inFlight('local'), queue.inFlight('upstream')]).toEqual([1, 2]);
    const waitingLocal = queue.acquire('local');
    expect(queue.waiting).toBe(1);
    await queue.acquire('upstream'); // the third upstream slot is free: no wait
    // The upstream lane is full now and the one waiting place is taken by the local caller.
    await expect(queue.acquire('upstream')).rejects.toMatchObject({ code: 'queue_full' });
    local();
    const nextLocal = await waitingLocal;
    expect([queue.inFlight('local'), queue.waiting]).toEqual([1, 0]);
    nextLocal();
    for (const release of upstream) release();
    expect(queue.inFlight()).toBe(1);
  });

  it('drops a waiter whose client disconnects, without taking a slot', async () => {
    const queue = createRequestQueue({ maxInFlight: { upstream: 1, local: 1 } });
    const release = await queue.acquire('upstream');
    const controller = new AbortController();
    const waiting = queue.acquire('upstream', controller.signal);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'client_disconnected' });
    expect(queue.waiting).toBe(0);
    release();
    expect(queue.inFlight()).toBe(0);
  });

  it('releases the slot however the work ends', async () => {
    const queue = createRequestQueue({ maxInFlight: { upstream: 1, local: 1 } });
    await expect(queue.run('local', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(queue.run('local', async () => 7)).resolves.toBe(7);
    expect(queue.inFlight()).toBe(0);
  });
});
