/**
 * Shared state for one process: the in-process job queue, in-memory limit windows, guest spend and holds, an
 * in-process payer lane and signal bus. Right for SQLite installs (one serving process); several replicas need the
 * Redis implementation of the same slots (src/backend/redis/shared-state.ts).
 */
import { createJobQueue } from './job-queue';
import { createKeyedMutex } from '../../lib/keyed-mutex';
import { createMemoryGuestSpendStore, createMemoryHoldStore, createMemoryRateLimitStore } from './metering-stores';
import { createLocalSignalBus } from './signal-bus';
import type { SharedState } from '../types';

export function createMemorySharedState(): SharedState {
  const signals = createLocalSignalBus();
  return {
    sharedAcrossReplicas: false,
    createJobQueue: (options) => createJobQueue(options),
    rateLimitStore: () => createMemoryRateLimitStore(),
    guestSpendStore: () => createMemoryGuestSpendStore(),
    guestHolds: createMemoryHoldStore(),
    payerLock: createKeyedMutex(),
    signals,
    closers: [{ name: 'signals', run: () => signals.close() }],
  };
}
