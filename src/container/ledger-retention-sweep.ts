/**
 * The timer of ledger retention (PRISM_LEDGER_RETENTION_DAYS; the rolling up itself is src/backend/ledger-retention.ts):
 * once at start, then every hour, one replica at a time (the backend's exclusive lock). Off when the retention is 0.
 * Spend records still queued in memory are written first, so a rolled-up day holds every call of it.
 */
import type { LedgerRetentionResult } from '../backend/ledger-retention';
import type { Logger } from '../lib/logger';

const EVERY_MS = 3_600_000;

export interface LedgerRetention {
  /** Rolls up now (retention 0: does nothing and answers null); the timer calls it too. */
  runOnce(now?: Date): Promise<LedgerRetentionResult | null>;
}

export interface LedgerRetentionSweep {
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

export function createLedgerRetention(deps: {
  retentionDays: number;
  rollUp: (before: Date) => Promise<LedgerRetentionResult>;
  flushSpend: () => Promise<void>;
  exclusive: <T>(name: string, work: () => Promise<T>) => Promise<T>;
}): LedgerRetention {
  return {
    async runOnce(now = new Date()) {
      if (deps.retentionDays <= 0) return null;
      await deps.flushSpend();
      const before = new Date(now.getTime() - deps.retentionDays * 86_400_000);
      return deps.exclusive('ledger-retention', () => deps.rollUp(before));
    },
  };
}

export function startLedgerRetentionSweep(retention: LedgerRetention, logger: Logger): LedgerRetentionSweep {
  let running: Promise<void> = Promise.resolve();
  const sweep = (): void => {
    running = running
      .then(() => retention.runOnce())
      .then((result) => {
        if (result && result.spendRowsRolledUp + result.walletRowsRolledUp > 0) {
          logger.info('rolled up ledger rows past their retention', { ...result });
        }
      })
      .catch((error: unknown) => logger.warn('ledger retention failed', { error: String(error) }));
  };
  sweep();
  const timer = setInterval(sweep, EVERY_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
