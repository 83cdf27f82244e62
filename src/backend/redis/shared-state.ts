/**
 * Shared state on Redis (`PRISM_REDIS_URL`), so several replicas act as one: the job queue on BullMQ with leases,
 * signals on pub/sub, limit windows, guest spend and holds as Lua scripts and counters, the guests' lane as a lock.
 * One command connection per process serves metering and publishing; the signal bus adds one subscriber and BullMQ
 * its own connections. Every key and channel is under `PRISM_REDIS_PREFIX`.
 */
import { Redis } from 'ioredis';
import type { Config } from '../../config/config';
import { createBullmqJobQueue } from './job-queue';
import type { Logger } from '../../lib/logger';
import {
  createRedisGuestSpendStore,
  createRedisHoldStore,
  createRedisPayerLock,
  createRedisRateLimitStore,
} from './metering-stores';
import { createRedisSignalBus } from './signal-bus';
import type { SharedState } from '../types';

/** How long an unsettled guest hold lives (the biller's hold lifetime). */
const HOLD_TTL_MS = 15 * 60_000;

export function createRedisSharedState(config: Config, redisUrl: string, logger: Logger): SharedState {
  const { prefix } = config.redis;
  const command = new Redis(redisUrl, { maxRetriesPerRequest: 2, connectionName: 'prism' });
  command.on('error', (error: Error) => logger.warn('Redis error', { error: error.message }));
  const signals = createRedisSignalBus({ publisher: command, prefix, logger });
  return {
    sharedAcrossReplicas: true,
    // The queue is closed by the container's own step (after running work is handed back), not by these closers.
    createJobQueue: (options) => createBullmqJobQueue({ redisUrl, prefix, leaseMs: config.jobs.leaseMs, ...options }),
    rateLimitStore: (limiter) => createRedisRateLimitStore(command, `${prefix}${limiter}:`),
    guestSpendStore: () => createRedisGuestSpendStore(command, prefix),
    guestHolds: createRedisHoldStore(command, prefix, {
      holdTtlMs: HOLD_TTL_MS,
      onError: (error) => logger.warn('metering: a hold was not given back', { error: String(error) }),
    }),
    payerLock: createRedisPayerLock(command, prefix),
    signals,
    closers: [
      { name: 'Redis', run: () => command.quit().then(() => undefined) },
      { name: 'signals', run: () => signals.close() },
    ],
  };
}
