/**
 * Following one execution as it runs: its record each time it changes, read from the store (never from this
 * process's memory), so a client can follow a batch run, a run on another replica, or a run a restart resumed.
 * "Something changed" arrives on the signal bus (published after each saved step and status change); a slow poll
 * covers signals a replica missed while it reconnected. Nothing is paid per step when nobody follows.
 */
import type { Principal } from '../../domain/account';
import { NotFoundError } from '../../domain/errors';
import type { Execution } from '../../domain/execution';
import { isTerminal } from '../../domain/prediction';
import { changeChannel } from './execution-run';
import type { ExecutionsService, ExecutionsServiceDeps } from './executions.types';

/** Without a signal (or when one was lost), how often the store is read again. */
export const FOLLOW_POLL_MS = 2000;

export function createExecutionFollow(deps: ExecutionsServiceDeps): ExecutionsService['follow'] {
  return async (principal: Principal, id: string, signal: AbortSignal, pollMs = FOLLOW_POLL_MS) => {
    const orgId = await deps.orgIdFor(principal);
    const first = await deps.store.get(orgId, id);
    if (!first) throw new NotFoundError('execution', id);
    return follow(first);

    async function* follow(initial: Execution): AsyncGenerator<Execution> {
      let changed = false;
      let wake: (() => void) | null = null;
      const onChange = (): void => {
        changed = true;
        wake?.();
      };
      // Subscribed before the first yield: a change between the first read and the wait is not lost.
      const unsubscribe = deps.signals?.subscribe(changeChannel(id), onChange) ?? (() => undefined);
      const onAbort = (): void => wake?.();
      signal.addEventListener('abort', onAbort);
      try {
        let record = initial;
        yield record;
        while (!isTerminal(record.status) && !signal.aborted) {
          if (!changed) {
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, pollMs);
              wake = () => {
                clearTimeout(timer);
                resolve();
              };
            });
            wake = null;
          }
          if (signal.aborted) return;
          changed = false;
          const next = await deps.store.get(orgId, id);
          if (!next) return;
          record = next;
          yield record;
        }
      } finally {
        unsubscribe();
        signal.removeEventListener('abort', onAbort);
      }
    }
  };
}
