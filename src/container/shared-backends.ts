/**
 * The parts of the composition root that several replicas share through Redis: the job queue, the signal bus and
 * metering's state (rate-limit windows, guest spend, money held by running calls, the payer lock). Without
 * `PRISM_REDIS_URL` all of it stays in the process (one replica); with it, jobs go through BullMQ with leases,
 * signals (MCP cancels) through pub/sub, and metering through Lua scripts on one command connection per process.
 * `shared` tells the start-up resume to leave running work to the replica that holds it.
 */
import { Redis } from 'ioredis';
import type { Config } from '../config/config';
import { createBullmqJobQueue } from '../jobs/bullmq.job-queue';
import { createJobQueue, type JobQueue } from '../jobs/job-queue';
import type { CloseStep } from '../lib/close-all';
import { createKeyedMutex } from '../lib/keyed-mutex';
import type { Logger } from '../lib/logger';
import {
  createMemoryGuestSpendStore,
  createMemoryHoldStore,
  createMemoryRateLimitStore,
} from '../metering/memory-stores';
import type { GuestSpendStore, HoldStore, PayerLock, RateLimitStore } from '../metering/ports';
import {
  createRedisGuestSpendStore,
  createRedisHoldStore,
  createRedisPayerLock,
  createRedisRateLimitStore,
} from '../metering/redis-stores';
import { createRedisSignalBus } from '../signals/redis.signal-bus';
import { createLocalSignalBus, type SignalBus } from '../signals/signal-bus';

/** Where metering keeps its state; each call of a factory is a store of its own (its own windows or days). */
export interface MeteringState {
  /** Windows of one limiter (`gateway`, `decisions`): limiters with different limits keep apart. */
  rateLimitStore(limiter: string): RateLimitStore;
  guestSpendStore(): GuestSpendStore;
  /** Money held by running calls, per organisation and per guest counter (one store for every biller). */
  holds: HoldStore;
  /** One reservation or settlement per payer at a time, across every biller that shares `holds`. */
  payerLock: PayerLock;
}

export interface SharedBackends {
  jobs: JobQueue;
  signals: SignalBus;
  metering: MeteringState;
  /** True when other replicas may share the queue (Redis configured). */
  shared: boolean;
  /** In the order things were opened; the container runs them in reverse (the queue closes on its own step). */
  closers: CloseStep[];
}

/** How long an unsettled hold lives (the biller's default). */
const HOLD_TTL_MS = 15 * 60_000;

export function createSharedBackends(config: Config, logger: Logger): SharedBackends {
  const redisUrl = config.redis.url;
  if (!redisUrl) {
    const signals = createLocalSignalBus();
    return {
      jobs: createJobQueue({ concurrency: config.jobs.concurrency, logger }),
      signals,
      metering: {
        rateLimitStore: () => createMemoryRateLimitStore(),
        guestSpendStore: () => createMemoryGuestSpendStore(),
        holds: createMemoryHoldStore(),
        payerLock: createKeyedMutex(),
      },
      shared: false,
      closers: [{ name: 'signals', run: () => signals.close() }],
    };
  }
  const { prefix } = config.redis;
  const command = new Redis(redisUrl, { maxRetriesPerRequest: 2, connectionName: 'prism' });
  command.on('error', (error: Error) => logger.warn('Redis error', { error: error.message }));
  const signals = createRedisSignalBus({ publisher: command, prefix, logger });
  const jobs = createBullmqJobQueue({
    redisUrl,
    prefix,
    concurrency: config.jobs.concurrency,
    leaseMs: config.jobs.leaseMs,
    logger,
  });
  return {
    jobs,
    signals,
    metering: {
      rateLimitStore: (limiter) => createRedisRateLimitStore(command, `${prefix}${limiter}:`),
      guestSpendStore: () => createRedisGuestSpendStore(command, prefix),
      holds: createRedisHoldStore(command, prefix, {
        holdTtlMs: HOLD_TTL_MS,
        onError: (error) => logger.warn('metering: a hold was not given back', { error: String(error) }),
      }),
      payerLock: createRedisPayerLock(command, prefix),
    },
    shared: true,
    closers: [
      { name: 'Redis', run: () => command.quit().then(() => undefined) },
      { name: 'signals', run: () => signals.close() },
    ],
  };
}
