/**
 * The job queue's handler and the restart sweep: a queued record runs with the hold it was accepted with (or, after
 * a restart, a direct debit); after a restart unfinished records go back to the queue, and one interrupted too often
 * is failed with a message.
 */
import { AppError } from '../../domain/errors';
import { EMPTY_USAGE, isTerminal } from '../../domain/prediction';
import { givenUpMessage, startsUsedUp } from '../../domain/restart-policy';
import type { PredictionRunner, QueuedHolds } from './prediction-run';
import type { PredictionsService, PredictionsServiceDeps } from './predictions.types';

export function createPredictionResume(
  deps: PredictionsServiceDeps,
  runner: PredictionRunner,
  held: QueuedHolds,
): Pick<PredictionsService, 'runJob' | 'resumeUnfinished'> {
  const { store } = deps;
  const { queuedHolds, queuedRunHolds } = held;
  const { run, holdFor } = runner;
  return {
    async runJob(id) {
      const prediction = await store.getById(id);
      const runHold = queuedRunHolds.get(id) ?? null;
      queuedRunHolds.delete(id);
      if (!prediction || isTerminal(prediction.status)) {
        queuedHolds.get(id)?.release();
        queuedHolds.delete(id);
        runHold?.release();
        return;
      }
      const hold = prediction.request.agent ? null : holdFor(prediction);
      await run(prediction, hold, runHold).catch((error: unknown) => {
        if (!(error instanceof AppError)) throw error;
      });
    },

    async resumeUnfinished() {
      let resumed = 0;
      let failed = 0;
      for (const prediction of await store.unfinished()) {
        if (startsUsedUp(prediction.attempts)) {
          const message = givenUpMessage('request', prediction.attempts);
          const done = await store.transition(prediction.id, ['pending', 'enqueued', 'running'], 'failed', {
            usage: { ...EMPTY_USAGE, credits_used: 0, message },
            errorMessage: message,
            completedAt: new Date(),
          });
          if (done) deps.onFinished(done);
          failed += 1;
          continue;
        }
        if (prediction.status === 'running' || prediction.status === 'pending') {
          await store.transition(prediction.id, ['running', 'pending'], 'enqueued');
        }
        deps.enqueue(prediction.id);
        resumed += 1;
      }
      return { resumed, failed };
    },
  };
}
