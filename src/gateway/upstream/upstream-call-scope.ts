/**
 * One upstream call's deadlines and cancellation, in one place.
 *
 * The first-token timer, the total timer and the caller's signal all abort the same controller; the first
 * to fire is remembered as the cause, so whatever the transport throws afterwards (AbortError, "terminated",
 * a socket error) is reported as what really happened: 504 `ttft_timeout`, 504 `deadline_exceeded` or 499.
 */
import { AppError, ClientDisconnectedError } from '../../domain/errors';
import { CancelController, type CancelSignal } from '../../lib/cancel';
import { DeadlineExceededError, TtftTimeoutError, UpstreamError } from '../gateway-errors';
import type { UpstreamTarget } from '../catalogue/model.types';

export type AbortCause = 'ttft' | 'total' | 'client';

/** One call's deadlines and cancellation, turned into the right error whatever the transport threw. */
export class CallScope {
  readonly controller = new CancelController();
  cause: AbortCause | null = null;
  private readonly timers: NodeJS.Timeout[] = [];
  private ttftTimer: NodeJS.Timeout | undefined;
  readonly deadline: number;

  constructor(
    readonly target: UpstreamTarget,
    private readonly signal: CancelSignal | undefined,
    stream: boolean,
  ) {
    this.deadline = Date.now() + target.totalTimeoutMs;
    this.timers.push(setTimeout(() => this.abort('total'), target.totalTimeoutMs));
    if (stream) {
      this.ttftTimer = setTimeout(() => this.abort('ttft'), target.ttftTimeoutMs);
      this.timers.push(this.ttftTimer);
    }
    if (signal?.aborted) this.abort('client');
    signal?.addEventListener('abort', this.onClientAbort, { once: true });
  }

  private readonly onClientAbort = (): void => this.abort('client');

  abort(cause: AbortCause): void {
    this.cause ??= cause;
    this.controller.abort();
  }

  firstChunkArrived(): void {
    clearTimeout(this.ttftTimer);
  }

  /** Clears timers and listeners; the call is over. */
  dispose(): void {
    for (const t of this.timers) clearTimeout(t);
    this.signal?.removeEventListener('abort', this.onClientAbort);
  }

  /** Our error for whatever went wrong: a deadline or disconnect first, then an AppError as is, else a 502. */
  translate(error: unknown): AppError {
    const { provider, ttftTimeoutMs, totalTimeoutMs } = this.target;
    if (this.cause === 'ttft') return new TtftTimeoutError(provider, ttftTimeoutMs / 1000);
    if (this.cause === 'total') return new DeadlineExceededError(provider, totalTimeoutMs / 1000);
    if (this.cause === 'client') return new ClientDisconnectedError();
    if (isAppError(error)) return error;
    return new UpstreamError(provider, `The upstream connection failed: ${describe(error)}`);
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  const code = typeof cause === 'object' && cause !== null ? (cause as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? `${error.message} (${code})` : error.message;
}
