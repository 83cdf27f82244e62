/**
 * With several replicas (shared state on Redis), the agent runs' heartbeat: every half lease (PRISM_JOB_LEASE_S)
 * this replica marks the runs it holds as alive, then fails the synchronous runs nobody marked for three leases
 * (their replica died; see services/executions/execution-lease.ts). One replica alone needs none: a restart sweep
 * takes its runs over.
 */
import type { Logger } from '../lib/logger';
import type { ExecutionsService } from '../services/executions/executions.types';

export interface RunHeartbeat {
  /** Stops the timer and waits for a beat in progress. */
  stop(): Promise<void>;
}

/** Silence, in leases, after which a synchronous run's replica is taken for dead. */
export const STALLED_AFTER_LEASES = 3;

export function startRunHeartbeat(
  executions: Pick<ExecutionsService, 'heartbeat' | 'failStalled'>,
  leaseMs: number,
  logger: Logger,
): RunHeartbeat {
  let running: Promise<void> = Promise.resolve();
  const beat = (): void => {
    running = running
      .then(() => executions.heartbeat())
      .then(() => executions.failStalled(STALLED_AFTER_LEASES * leaseMs))
      .then((failed) => {
        if (failed > 0) logger.info('failed agent runs whose replica stopped', { failed });
      })
      .catch((error: unknown) => logger.warn('agent run heartbeat failed', { error: String(error) }));
  };
  const timer = setInterval(beat, Math.max(100, Math.floor(leaseMs / 2)));
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
