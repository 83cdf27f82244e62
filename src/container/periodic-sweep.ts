/**
 * The timer shape the container's periodic sweeps share (guest files, ledger retention): run the work once at start,
 * then every `everyMs`, one run at a time (a run waits for the previous one), failures logged and not fatal, the
 * timer unref'd so it never holds the process open, and a stop that clears the timer and waits for a run in progress.
 */
import type { Logger } from '../lib/logger';

export interface PeriodicSweep {
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

/** `work` does one run; `failure` is the warning logged when a run throws. */
export function startPeriodicSweep(
  work: () => Promise<void>,
  everyMs: number,
  logger: Logger,
  failure: string,
): PeriodicSweep {
  let running: Promise<void> = Promise.resolve();
  const sweep = (): void => {
    running = running.then(work).catch((error: unknown) => logger.warn(failure, { error: String(error) }));
  };
  sweep();
  const timer = setInterval(sweep, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
