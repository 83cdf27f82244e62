/**
 * Whose work this is, carried through async calls without threading a parameter through every engine.
 *
 * The services run each request's or job's work inside `runForTenant(orgId, …)`; shared pools deep in the engines
 * (the OCR worker pool) read `currentTenant()` when a task is queued and take turns between organisations, so one
 * organisation's 500-page scan cannot starve another's single image. Work started outside any tenant (start-up,
 * tests) shares one anonymous turn.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const storage = new AsyncLocalStorage<string>();

/** Runs `work` (and everything it awaits or starts) as `tenant`'s. */
export function runForTenant<T>(tenant: string, work: () => T): T {
  return storage.run(tenant, work);
}

/** The tenant of the work running now, if any. */
export function currentTenant(): string | undefined {
  return storage.getStore();
}
