/**
 * Cancellation for per-call work on hot paths, without AbortController.
 *
 * Why not AbortSignal: on Node 20 every AbortSignal survives young-generation garbage collections and is promoted
 * to the old generation, even one that lives a millisecond (measured: 260 bytes promoted per signal, none for a
 * plain object). A gateway call made two (the client-disconnect one and the upstream call's), so each call left
 * garbage that only a full collection could reclaim, and young pauses grew with it. `CancelController` is a small
 * class (its methods live on the prototype, so no object gets a hidden class of its own) and its signal is
 * collected young.
 *
 * `CancelSignal` is the slice of `AbortSignal` the gateway uses, so a real AbortSignal is accepted wherever a
 * CancelSignal is (tests and callers outside the hot path pass those). As with AbortSignal, a listener added
 * after the abort is never called; every listener runs at most once.
 */

export interface CancelSignal {
  readonly aborted: boolean;
  /** Why it was aborted, where the signal keeps it (an AbortSignal does; the light signal does not). */
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** The signal half: what the work that can be cancelled sees. */
class LightSignal implements CancelSignal {
  aborted = false;
  private listeners: (() => void)[] | null = null;

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.listeners?.splice(at, 1);
  }

  /** Marks the signal aborted and calls each listener once, in the order they were added. */
  fire(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listeners = this.listeners;
    this.listeners = null;
    if (listeners) for (const listener of listeners) listener();
  }
}

/** The controlling half: whoever may cancel holds this and hands out `signal`. */
export class CancelController {
  private readonly light = new LightSignal();

  get signal(): CancelSignal {
    return this.light;
  }

  abort(): void {
    this.light.fire();
  }

  /** Aborts this too when `parent` aborts (at once if it has); returns the function that stops following it. */
  follow(parent: CancelSignal): () => void {
    if (parent.aborted) {
      this.abort();
      return () => undefined;
    }
    const onAbort = (): void => this.abort();
    parent.addEventListener('abort', onAbort, { once: true });
    return () => parent.removeEventListener('abort', onAbort);
  }
}

/**
 * Work stopped because nobody wants its result any more (the client left, cancelled the call, or its deadline
 * answered first). Deliberately not an AppError: it carries no HTTP status because it never has a client to answer
 * (whoever cancelled has already been answered or is gone). The embedded engines throw it instead of retrying or
 * reporting a failed page, and the services that start cancellable work recognise it. Should one ever escape to the
 * HTTP layer by mistake, it is an ordinary error there: a generic 500 with no detail, and logged, so it is seen.
 */
export class WorkCancelledError extends Error {
  constructor(message = 'The work was cancelled: nobody is waiting for its result.') {
    super(message);
    this.name = 'WorkCancelledError';
  }
}

/** Throws {@link WorkCancelledError} when `signal` is aborted (a check between units of work). */
export function throwIfCancelled(signal: CancelSignal | undefined): void {
  if (signal?.aborted) throw new WorkCancelledError();
}

/**
 * Whether a unit of work that failed was cancelled rather than failed: it threw the cancellation itself, or its
 * signal aborted meanwhile (so whatever it threw is moot). Such a failure is not retried nor reported as an error.
 */
export function isCancellation(error: unknown, signal: CancelSignal | undefined): boolean {
  return error instanceof WorkCancelledError || signal?.aborted === true;
}
