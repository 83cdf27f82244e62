/**
 * How often background work is started again after the process stopped under it.
 *
 * A prediction, execution or evaluation that was running when the process died is resumed at most once: if the
 * work itself stopped the server (a hang, an out-of-memory), resuming it forever would turn one request into a
 * server that never comes back. Each kind persists how many times it was started (`attempts`, incremented when a
 * job claims the record) and its restart path fails a record that has used its starts, with {@link givenUpMessage}.
 */

/** Starts a record may have: the first one and one resume after a restart. */
export const MAX_STARTS = 2;

/** True when a record found unfinished at start-up has used its starts and must be failed, not resumed. */
export const startsUsedUp = (attempts: number): boolean => attempts >= MAX_STARTS;

/** The error message of work given up after restarts (`what`: "run", "request", "evaluation"). */
export function givenUpMessage(what: string, attempts: number): string {
  return (
    `The ${what} was running when the server stopped ${attempts} times and is not resumed again; ` +
    'send it again, and if it fails the same way, make it smaller.'
  );
}
