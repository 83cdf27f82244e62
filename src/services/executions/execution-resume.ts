/**
 * Runs after a restart: each unfinished execution is resumed from its checkpoint (through the job queue), started
 * again when it never ran, or failed with a message when it cannot be (no checkpoint, or interrupted too often).
 * None is left `running`.
 */
import { givenUpMessage, startsUsedUp } from '../../domain/restart-policy';
import type { ExecutionRuns } from './execution-runs';
import type { StartExecution } from './execution-run';
import type { ExecutionsService, ExecutionsServiceDeps } from './executions.types';

export function createExecutionResume(
  deps: ExecutionsServiceDeps,
  runs: ExecutionRuns,
  start: StartExecution,
): Pick<ExecutionsService, 'runJob' | 'resumeUnfinished'> {
  const { store } = deps;
  const { resumable } = runs;
  return {
    async runJob(id) {
      const resume = resumable.delete(id);
      await start(id, resume);
    },

    async resumeUnfinished() {
      let resumed = 0;
      let failed = 0;
      for (const execution of await store.unfinished()) {
        if (startsUsedUp(execution.attempts)) {
          const message = givenUpMessage('run', execution.attempts);
          const done = await store.transition(execution.id, ['pending', 'enqueued', 'running'], 'failed', {
            usage: { ...execution.usage, message },
            errorMessage: message,
            completedAt: new Date(),
          });
          await deps.runtime.discard(execution.id).catch(() => undefined);
          if (done) deps.onFinished(done);
          failed += 1;
          continue;
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
            failed += 1;
            continue;
          }
          resumable.add(execution.id);
          await store.transition(execution.id, ['running'], 'enqueued');
        } else if (execution.status === 'pending') {
          await store.transition(execution.id, ['pending'], 'enqueued');
        }
        deps.enqueue(execution.id);
        resumed += 1;
      }
      return { resumed, failed };
    },
  };
}
