import { createRequestQueue } from '../../../src/metering/request-queue';
import { CancelController, isCancellation, WorkCancelledError } from '../../../src/lib/cancel';

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

  it('follows a parent signal until unlinked, and aborts at once when the parent already has', () => {
    const parent = new CancelController();
    const child = new CancelController();
    const unfollow = child.follow(parent.signal);
    parent.abort();
    expect(child.signal.aborted).toBe(true);

    const other = new CancelController();
    const unlinked = new CancelController();
    unlinked.follow(other.signal)();
    other.abort();
    expect(unlinked.signal.aborted).toBe(false);

    const late = new CancelController();
    late.follow(parent.signal);
    expect(late.signal.aborted).toBe(true);
    unfollow();
  });

  it('tells a cancelled unit of work from a failed one', () => {
    const live = new CancelController();
    expect(isCancellation(new Error('boom'), live.signal)).toBe(false);
    expect(isCancellation(new Error('boom'), undefined)).toBe(false);
    expect(isCancellation(new WorkCancelledError(), undefined)).toBe(true);
    live.abort();
    expect(isCancellation(new Error('boom'), live.signal)).toBe(true);
  });
});
