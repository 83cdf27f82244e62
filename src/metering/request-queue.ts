/**
 * The per-replica admission gate. Calls run in lanes with their own limit on calls running at once: `upstream`
 * calls mostly wait on another server (hundreds can run together), `local` calls use this machine's CPU (OCR,
 * PDF rendering), so only a few should. Callers beyond a lane's limit wait in FIFO order; at most `maxWaiting`
 * (spec: 256) wait across all lanes, and any call beyond that is refused at once with 429 `Retry-After: 60`.
 *
 * It is deliberately per replica and in memory (the spec's queue is "per ingress replica"); the shared budgets
 * live in the rate limiter. A waiting caller that disconnects leaves the queue without taking a slot.
 */
import type { CancelSignal } from '../lib/cancel';
import { QueueFullError } from './metering-errors';
import { ClientDisconnectedError } from '../domain/errors';

/** Where a call runs: on an upstream server, or on this machine's engines. */
export type QueueLane = 'upstream' | 'local';

/** Gives the slot back; calling it more than once is harmless. */
export type ReleaseSlot = () => void;

export interface RequestQueue {
  /**
   * Wait for a slot in `lane`. @throws AppError 429 `queue_full` when the queue is full, 499
   * `client_disconnected` when `signal` aborts while waiting.
   */
  acquire(lane: QueueLane, signal?: CancelSignal): Promise<ReleaseSlot>;
  /** Run `work` in a slot of `lane`, releasing it however `work` ends. */
  run<T>(lane: QueueLane, work: () => Promise<T>, signal?: CancelSignal): Promise<T>;
  /** Calls running, in all lanes or in one. */
  inFlight(lane?: QueueLane): number;
  /** Calls waiting, in all lanes. */
  readonly waiting: number;
}

export interface RequestQueueOptions {
  /** Calls running at once per lane. */
  maxInFlight: Readonly<Record<QueueLane, number>>;
  /** Calls waiting across all lanes (default 256). */
  maxWaiting?: number;
  /** `Retry-After` of the queue-full 429. */
  retryAfterS?: number;
}

interface Lane {
  limit: number;
  running: number;
  waiters: Array<() => void>;
}

export function createRequestQueue(options: RequestQueueOptions): RequestQueue {
  const { maxWaiting = 256, retryAfterS = 60 } = options;
  const lanes = {} as Record<QueueLane, Lane>;
  for (const name of ['upstream', 'local'] as const) {
    const limit = options.maxInFlight[name];
    if (!(limit >= 1)) throw new RangeError(`maxInFlight.${name} must be at least 1`);
    lanes[name] = { limit, running: 0, waiters: [] };
  }
  let waiting = 0;

  const releaser = (lane: Lane): ReleaseSlot => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = lane.waiters.shift();
      if (next) {
        waiting -= 1;
        next();
      } else lane.running -= 1;
    };
  };

  const acquire = (name: QueueLane, signal?: CancelSignal): Promise<ReleaseSlot> => {
    if (signal?.aborted) return Promise.reject(new ClientDisconnectedError());
    const lane = lanes[name];
    if (lane.running < lane.limit) {
      lane.running += 1;
      return Promise.resolve(releaser(lane));
    }
    if (waiting >= maxWaiting) return Promise.reject(new QueueFullError(retryAfterS));
    return new Promise<ReleaseSlot>((resolve, reject) => {
      const onAbort = (): void => {
        const at = lane.waiters.indexOf(grant);
        if (at >= 0) {
          lane.waiters.splice(at, 1);
          waiting -= 1;
        }
        reject(new ClientDisconnectedError());
      };
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve(releaser(lane));
      };
      lane.waiters.push(grant);
      waiting += 1;
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  };

  return {
    acquire,
    async run(lane, work, signal) {
      const release = await acquire(lane, signal);
      try {
        return await work();
      } finally {
        release();
      }
    },
    inFlight(lane) {
      return lane ? lanes[lane].running : lanes.upstream.running + lanes.local.running;
    },
    get waiting() {
      return waiting;
    },
  };
}
