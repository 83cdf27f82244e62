/**
 * The per-replica admission gate: at most `maxInFlight` gateway calls run at once, at most `maxWaiting` (spec: 256)
 * wait in FIFO order, and any call beyond that is refused at once with 429 `Retry-After: 60`.
 *
 * It is deliberately per replica and in memory (the spec's queue is "per ingress replica"); the shared budgets
 * live in the rate limiter. A waiting caller that disconnects leaves the queue without taking a slot.
 */
import { clientDisconnected, queueFull } from './gateway-errors';

/** Gives the slot back; calling it more than once is harmless. */
export type ReleaseSlot = () => void;

export interface RequestQueue {
  /**
   * Wait for a slot. @throws AppError 429 `queue_full` when the queue is full, 499 `client_disconnected` when
   * `signal` aborts while waiting.
   */
  acquire(signal?: AbortSignal): Promise<ReleaseSlot>;
  /** Run `work` in a slot, releasing it however `work` ends. */
  run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  readonly inFlight: number;
  readonly waiting: number;
}

export interface RequestQueueOptions {
  maxInFlight: number;
  maxWaiting?: number;
  /** `Retry-After` of the queue-full 429. */
  retryAfterS?: number;
}

interface Waiter {
  grant: () => void;
}

export function createRequestQueue(options: RequestQueueOptions): RequestQueue {
  const { maxInFlight, maxWaiting = 256, retryAfterS = 60 } = options;
  if (!(maxInFlight >= 1)) throw new RangeError('maxInFlight must be at least 1');
  let inFlight = 0;
  const waiters: Waiter[] = [];

  const releaser = (): ReleaseSlot => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = waiters.shift();
      if (next) next.grant();
      else inFlight -= 1;
    };
  };

  const acquire = (signal?: AbortSignal): Promise<ReleaseSlot> => {
    if (signal?.aborted) return Promise.reject(clientDisconnected());
    if (inFlight < maxInFlight) {
      inFlight += 1;
      return Promise.resolve(releaser());
    }
    if (waiters.length >= maxWaiting) return Promise.reject(queueFull(retryAfterS));
    return new Promise<ReleaseSlot>((resolve, reject) => {
      const onAbort = (): void => {
        const at = waiters.indexOf(waiter);
        if (at >= 0) waiters.splice(at, 1);
        reject(clientDisconnected());
      };
      const waiter: Waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(releaser());
        },
      };
      waiters.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  };

  return {
    acquire,
    async run(work, signal) {
      const release = await acquire(signal);
      try {
        return await work();
      } finally {
        release();
      }
    },
    get inFlight() {
      return inFlight;
    },
    get waiting() {
      return waiters.length;
    },
  };
}
