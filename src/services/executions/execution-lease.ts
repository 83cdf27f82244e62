/**
 * Synchronous runs across replicas: a run that is not `batch` never enters the job queue, so when its replica dies
 * no queue lease hands it over, and its caller (whose connection died with the replica) is gone too. Each replica
 * therefore touches the records of the runs it holds (a heartbeat), and any replica fails a synchronous run whose
 * record nobody touched for a while, with a message saying why, instead of leaving it `running` for ever. Batch
 * runs are left to the queue's leases, which take them over from their checkpoints.
 */
import type { Execution } from '../../domain/execution';
import type { ExecutionRuns } from './execution-runs';
import type { ExecutionsService, ExecutionsServiceDeps } from './executions.types';

/** The status message of a synchronous run failed because its replica stopped. */
export function stalledRunMessage(silentS: number): string {
  return (
    `The replica running this run stopped before it finished (no sign of life for over ${silentS} s), so the run ` +
    'was not completed and nothing more is billed for it; send it again.'
  );
}

export function createExecutionLease(
  deps: ExecutionsServiceDeps,
  runs: ExecutionRuns,
): Pick<ExecutionsService, 'heartbeat' | 'failStalled'> {
  const { store, logger } = deps;

  async function fail(execution: Execution, silentMs: number): Promise<boolean> {
    const message = stalledRunMessage(Math.round(silentMs / 1000));
    // The claim: a run started again meanwhile (its attempts moved on) is not this one.
    const done = await store.transition(
      execution.id,
      ['running'],
      'failed',
      { usage: { ...execution.usage, message }, errorMessage: message, completedAt: new Date() },
      execution.attempts,
    );
    if (!done) return false;
    await deps.runtime.discard(execution.id).catch(() => undefined);
    logger.warn('failed a run whose replica stopped', { execution: execution.id });
    deps.onFinished(done);
    return true;
  }

  return {
    async heartbeat() {
      await store.touch([...runs.running.keys()]);
    },
    async failStalled(silentMs) {
      let failed = 0;
      for (const execution of await store.stalled(new Date(Date.now() - silentMs))) {
        // Runs of this replica are alive whatever their record says; batch runs belong to the queue's leases.
        if (execution.request.batch || runs.running.has(execution.id)) continue;
        if (await fail(execution, silentMs)) failed += 1;
      }
      return failed;
    },
  };
}
