/**
 * Whose work this is, and whether anyone still wants it, carried through async calls without threading parameters
 * through every engine.
 *
 * The services run each request's or job's work inside `runForTenant(orgId, …)`; shared pools deep in the engines
 * (the OCR worker pool) read `currentTenant()` when a task is queued and take turns between organisations, so one
 * organisation's 500-page scan cannot starve another's single image. Work started outside any tenant (start-up,
 * tests) shares one anonymous turn.
 *
 * Work whose result can stop being wanted (a gateway chat call on a local model whose client left or whose deadline
 * answered first, a waiting MCP extraction the client cancelled) also passes a signal; the engines read
 * `currentWorkSignal()` and stop starting pages, frames and OCR tasks once it aborts. A nested `runForTenant`
 * without a signal keeps the enclosing work's signal (it is part of that work); one with a signal uses its own.
 *
 * Cost: one small object per run (the store), and nothing at all on paths that never call it (the gateway's
 * upstream calls do not).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { CancelSignal } from './cancel';

interface WorkContext {
  readonly tenant: string;
  readonly signal: CancelSignal | undefined;
}

const storage = new AsyncLocalStorage<WorkContext>();

/**
 * Runs `work` (and everything it awaits or starts) as `tenant`'s; `signal`, when given, is the work's cancel
 * signal (otherwise the enclosing work's, if any).
 */
export function runForTenant<T>(tenant: string, work: () => T, signal?: CancelSignal): T {
  return storage.run({ tenant, signal: signal ?? storage.getStore()?.signal }, work);
}

/** The tenant of the work running now, if any. */
export function currentTenant(): string | undefined {
  return storage.getStore()?.tenant;
}

/** The cancel signal of the work running now, if it has one. */
export function currentWorkSignal(): CancelSignal | undefined {
  return storage.getStore()?.signal;
}
