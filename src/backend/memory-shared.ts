/**
 * Shared state for one process: the in-process job queue and in-memory limit windows. Right for SQLite installs
 * (one serving process); several replicas need the Redis implementation of the same slots.
 */
import { createMemoryGuestSpendStore, createMemoryRateLimitStore } from '../metering/memory-stores';
import { createJobQueue } from '../jobs/job-queue';
import type { SharedState } from './types';

export function createMemorySharedState(): SharedState {
  return {
    createJobQueue: (options) => createJobQueue(options),
    rateLimitStore: () => createMemoryRateLimitStore(),
    guestSpendStore: () => createMemoryGuestSpendStore(),
    closers: [],
  };
}
