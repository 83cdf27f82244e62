import { createRequestQueue } from '../../../src/gateway/request-queue';
import { CancelController } from '../../../src/lib/cancel';

describe('CancelController', () => {
  it('calls each listener once, in order, when aborted, and reports aborted', () => {
    const controller = new CancelController();
    const calls: string[] = [];
    controller.signal.addEventListener('abort', () => calls.push('first'));
    controller.signal.addEventListener('abort', () => calls.push('second'), { once: true });
    expect(controller.signal.aborted).toBe(false);
    controller.abort();
    controller.abort();
    expect(controller.signal.aborted).toBe(true);
    expect(calls).toEqual(['first', 'second']);
  });

  it('does not call a listener that was removed, nor one added after the abort', () => {
    const controller = new CancelController();
    const calls: string[] = [];
    const removed = (): void => {
      calls.push('removed');
    };
    controller.signal.addEventListener('abort', removed);
    controller.signal.removeEventListener('abort', removed);
    controller.signal.removeEventListener('abort', removed);
    controller.abort();
    controller.signal.addEventListener('abort', () => calls.push('late'));
    expect(calls).toEqual([]);
  });

  it("takes an AbortSignal's place in the code that listens: a queue waiter leaves when it aborts", async () => {
    const queue = createRequestQueue({ maxInFlight: { upstream: 1, local: 1 } });
    const release = await queue.acquire('upstream');
    const controller = new CancelController();
    const waiting = queue.acquire('upstream', controller.signal);
    expect(queue.waiting).toBe(1);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'client_disconnected' });
    expect(queue.waiting).toBe(0);
    release();
    expect(queue.inFlight()).toBe(0);
  });
});
