/**
 * The job queue's handler and the restart sweep: a queued record runs with the hold it was accepted with (or, after
 * a restart, a direct debit); after a restart unfinished records go back to the queue, and one interrupted too often
 * is failed with a message. With a shared queue (Redis) a job whose replica died is redelivered to another one,
 * which takes the `running` record over: the redelivery is a start like a restart's, under the same restart policy.
 */
import { AppError } from '../../domain/errors';
import { WorkCancelledError } from '../../lib/cancel';
import { EMPTY_USAGE, isTerminal, type Prediction } from '../../domain/prediction';
import { givenUpMessage, startsUsedUp } from '../../domain/restart-policy';
import { resumeUnfinished } from '../resume-unfinished';
import type { RunningPredictions } from './prediction-cancel';
import type { PredictionRunner, QueuedHolds } from './prediction-run';
import type { PredictionsService, PredictionsServiceDeps } from './predictions.types';

export function createPredictionResume(
  deps: PredictionsServiceDeps,
  runner: PredictionRunner,
  held: QueuedHolds,
  running: RunningPredictions,
): Pick<PredictionsService, 'runJob' | 'resumeUnfinished'> {
  const { store } = deps;
  const { queuedHolds, queuedRunHolds } = held;
  const { run, holdFor } = runner;

  /**
   * Makes an interrupted record runnable again (`enqueued`), or fails it once it has used its starts.
   * @returns whether it may run.
   */
  async function reclaim(prediction: Prediction): Promise<boolean> {
    if (startsUsedUp(prediction.attempts)) {
      const message = givenUpMessage('request', prediction.attempts);
      const done = await store.transition(prediction.id, ['pending', 'enqueued', 'running'], 'failed', {
        usage: { ...EMPTY_USAGE, credits_used: 0, message },
        errorMessage: message,
        completedAt: new Date(),
      });
      if (done) deps.onFinished(done);
      return false;
    }
    if (prediction.status === 'running' || prediction.status === 'pending') {
      await store.transition(prediction.id, ['running', 'pending'], 'enqueued');
    }
    return true;
  }

  return {
    async runJob(id, delivery = { redelivered: false }) {
      let prediction = await store.getById(id);
      if (prediction && delivery.redelivered && prediction.status === 'running') {
        prediction = (await reclaim(prediction)) ? await store.getById(id) : null;
      }
      const runHold = queuedRunHolds.get(id) ?? null;
      queuedRunHolds.delete(id);
      if (!prediction || isTerminal(prediction.status)) {
        queuedHolds.get(id)?.release();
        queuedHolds.delete(id);
        runHold?.release();
        return;
      }
      const hold = prediction.request.agent ? null : holdFor(prediction);
      // A cancel (prediction-cancel.ts) stops the run through this signal; it stores itself failed, billed nothing.
      const stop = running.start(id);
      await run(prediction, hold, runHold, undefined, stop.signal)
        .catch((error: unknown) => {
          if (!(error instanceof AppError) && !(error instanceof WorkCancelledError)) throw error;
        })
        .finally(stop.done);
    },

    resumeUnfinished: (options) =>
      resumeUnfinished({ unfinished: () => store.unfinished(), reclaim, enqueue: (id) => deps.enqueue(id) }, options),
  };
}
