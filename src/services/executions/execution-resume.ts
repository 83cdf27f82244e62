/**
 * Runs after a restart: each unfinished execution is resumed from its checkpoint (through the job queue), started
 * again when it never ran, or failed with a message when it cannot be (no checkpoint, or interrupted too often).
 * None is left `running`. With a shared queue (Redis) a job whose replica died is redelivered to another one, which
 * takes the `running` run over the same way: the redelivery is a start like a restart's, under the same policy.
 */
import type { Execution } from '../../domain/execution';
import { givenUpMessage, startsUsedUp } from '../../domain/restart-policy';
import { resumeUnfinished } from '../resume-unfinished';
import type { ExecutionRuns } from './execution-runs';
import type { StartExecution } from './execution-run';
import type { ExecutionsService, ExecutionsServiceDeps } from './executions.types';

export function createExecutionResume(
  deps: ExecutionsServiceDeps,
  runs: ExecutionRuns,
  start: StartExecution,
): Pick<ExecutionsService, 'runJob' | 'resumeUnfinished'> {
  const { store } = deps;
  const { resumable, releaseHold } = runs;

  /**
   * Makes an interrupted run runnable again (`enqueued`, resumed from its checkpoint when it has one), or fails it
   * when it never saved a step or has used its starts.
   * @returns whether it may run.
   */
  async function reclaim(execution: Execution): Promise<boolean> {
    if (startsUsedUp(execution.attempts)) {
      const message = givenUpMessage('run', execution.attempts);
      const done = await store.transition(execution.id, ['pending', 'enqueued', 'running'], 'failed', {
        usage: { ...execution.usage, message },
        errorMessage: message,
        completedAt: new Date(),
      });
      await deps.runtime.discard(execution.id).catch(() => undefined);
      if (done) deps.onFinished(done);
      return false;
    }
    if (execution.status === 'running') {
      if (!(await deps.runtime.hasCheckpoint(execution.id))) {
        const message = 'The run was interrupted by a restart before its first step was saved; send it again.';
        const done = await store.transition(execution.id, ['running'], 'failed', {
          usage: { ...execution.usage, message },
          errorMessage: message,
          completedAt: new Date(),
        });
        if (done) deps.onFinished(done);
        return false;
      }
      resumable.add(execution.id);
      await store.transition(execution.id, ['running'], 'enqueued');
    } else if (execution.status === 'pending') {
      await store.transition(execution.id, ['pending'], 'enqueued');
    }
    return true;
  }

  return {
    async runJob(id, delivery = { redelivered: false }) {
      if (delivery.redelivered) {
        const execution = await store.getById(id);
        if (execution?.status === 'running' && !(await reclaim(execution))) return releaseHold(id);
      }
      const resume = resumable.delete(id);
      await start(id, resume);
    },

    resumeUnfinished: (options) =>
      resumeUnfinished({ unfinished: () => store.unfinished(), reclaim, enqueue: (id) => deps.enqueue(id) }, options),
  };
}
