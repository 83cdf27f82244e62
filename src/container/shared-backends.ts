/**
 * The parts of the composition root that several replicas share through Redis: the job queue and the signal bus.
 * Without `PRISM_REDIS_URL` both stay in the process (one replica); with it, jobs go through BullMQ with leases and
 * signals (MCP cancels) through pub/sub. `shared` tells the start-up resume to leave running work to the replica
 * that holds it.
 */
import type { Config } from '../config/config';
import { createBullmqJobQueue } from '../jobs/bullmq.job-queue';
import { createJobQueue, type JobQueue } from '../jobs/job-queue';
import type { CloseStep } from '../lib/close-all';
import type { Logger } from '../lib/logger';
import { createRedisSignalBus } from '../signals/redis.signal-bus';
import { createLocalSignalBus, type SignalBus } from '../signals/signal-bus';

export interface SharedBackends {
  jobs: JobQueue;
  signals: SignalBus;
  /** True when other replicas may share the queue (Redis configured). */
  shared: boolean;
  /** In the order things were opened; the container runs them in reverse (the queue closes on its own step). */
  closers: CloseStep[];
}

export function createSharedBackends(config: Config, logger: Logger): SharedBackends {
  const redisUrl = config.redis.url;
  if (!redisUrl) {
    const signals = createLocalSignalBus();
    return {
      jobs: createJobQueue({ concurrency: config.jobs.concurrency, logger }),
      signals,
      shared: false,
      closers: [{ name: 'signals', run: () => signals.close() }],
    };
  }
  const signals = createRedisSignalBus({ redisUrl, prefix: config.redis.prefix, logger });
  const jobs = createBullmqJobQueue({
    redisUrl,
    prefix: config.redis.prefix,
    concurrency: config.jobs.concurrency,
    leaseMs: config.jobs.leaseMs,
    logger,
  });
  return { jobs, signals, shared: true, closers: [{ name: 'signals', run: () => signals.close() }] };
}
