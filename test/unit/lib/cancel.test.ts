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

  it('is interchangeable with an AbortSignal for the code that listens', () => {
    const listenTo = (signal: { addEventListener(type: 'abort', listener: () => void): void }) => {
      let fired = false;
      signal.addEventListener('abort', () => (fired = true));
      return () => fired;
    };
    const light = new CancelController();
    const real = new AbortController();
    const lightFired = listenTo(light.signal);
    const realFired = listenTo(real.signal);
    light.abort();
    real.abort();
    expect([lightFired(), realFired()]).toEqual([true, true]);
  });
});
