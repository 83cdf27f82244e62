/**
 * The timer of ledger retention (PRISM_LEDGER_RETENTION_DAYS; the rolling up itself is src/backend/ledger-retention.ts):
 * once at start, then every hour, one replica at a time (the backend's exclusive lock). Off when the retention is 0.
 * Spend records still queued in memory are written first, so a rolled-up day holds every call of it.
 */
import type { LedgerRetentionResult } from '../backend/ledger-retention';
import type { Logger } from '../lib/logger';
import { startPeriodicSweep, type PeriodicSweep } from './periodic-sweep';

const EVERY_MS = 3_600_000;

export interface LedgerRetention {
  /** Rolls up now (retention 0: does nothing and answers null); the timer calls it too. */
  runOnce(now?: Date): Promise<LedgerRetentionResult | null>;
}

export type LedgerRetentionSweep = PeriodicSweep;

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
  const work = async (): Promise<void> => {
    const result = await retention.runOnce();
    if (result && result.spendRowsRolledUp + result.walletRowsRolledUp > 0) {
      logger.info('rolled up ledger rows past their retention', { ...result });
    }
  };
  return startPeriodicSweep(work, EVERY_MS, logger, 'ledger retention failed');
}
