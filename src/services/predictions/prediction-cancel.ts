/**
 * Cancelling a prediction that has not finished (an MCP client's `tasks/cancel` of an extraction task). The spec's
 * prediction statuses have no `cancelled`: a cancelled prediction ends `failed`, its error saying it was cancelled,
 * with nothing billed (its hold given back) and no response kept.
 *
 * A queued record (`pending`, `enqueued`) is failed at once by compare-and-set, so the job that later takes it finds
 * it finished and runs nothing. A running one is told to stop: on this replica through the cancel signal its batch
 * run was started with, on another through the signal bus; the engine stops starting pages and frames and the run
 * stores itself `failed` (prediction-run.ts, as a synchronous call whose client went away). A prediction run on the
 * agent runtime cannot be stopped once it started (409 `prediction_not_cancellable`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ConflictError, NotFoundError } from '../../domain/errors';
import { EMPTY_USAGE, isTerminal, type Prediction } from '../../domain/prediction';
import { CancelController, type CancelSignal } from '../../lib/cancel';
import type { QueuedHolds } from './prediction-run';
import { CANCELLED_MESSAGE } from './prediction-run';
import type { PredictionsService, PredictionsServiceDeps } from './predictions.types';

/** The signal-bus channel a cancel of a prediction running on another replica travels on. */
export const PREDICTION_CANCEL_CHANNEL = 'predictions:cancel';
/** How long a cancel's answer waits for a running prediction to stop (it stops anyway; the answer then says so). */
const STOP_WAIT_MS = 10_000;
const STOP_POLL_MS = 100;

/** The batch runs going on in this replica, each with the controller that stops it. */
export interface RunningPredictions {
  /** A signal for the run of `id`; `done` forgets it when the run ends. */
  start(id: string): { signal: CancelSignal; done: () => void };
  /** Stops the run of `id` if it goes on here. */
  stopHere(id: string): boolean;
}

export function createRunningPredictions(deps: Pick<PredictionsServiceDeps, 'signals'>): RunningPredictions {
  const running = new Map<string, CancelController>();
  const stopHere = (id: string): boolean => {
    const controller = running.get(id);
    controller?.abort();
    return controller !== undefined;
  };
  deps.signals?.subscribe(PREDICTION_CANCEL_CHANNEL, (id) => void stopHere(id));
  return {
    start(id) {
      const controller = new CancelController();
      running.set(id, controller);
      return { signal: controller.signal, done: () => running.delete(id) };
    },
    stopHere,
  };
}

export function createPredictionCancel(
  deps: PredictionsServiceDeps,
  held: QueuedHolds,
  running: RunningPredictions,
): PredictionsService['cancel'] {
  const { store } = deps;
  return async (principal, id) => {
    const prediction = await store.get(await deps.orgIdFor(principal), id);
    if (!prediction) throw new NotFoundError('prediction', id);
    if (isTerminal(prediction.status)) {
      throw new ConflictError(`Prediction ${id} already ended (${prediction.status}).`, 'prediction_finished');
    }
    const done = await store.transition(id, ['pending', 'enqueued'], 'failed', {
      response: null,
      usage: { ...EMPTY_USAGE, credits_used: 0, message: CANCELLED_MESSAGE },
      errorMessage: CANCELLED_MESSAGE,
      completedAt: new Date(),
    });
    if (done) {
      // Its hold, if it waits in this replica, is given back now (the job finds the record finished and does too).
      held.queuedHolds.get(id)?.release();
      held.queuedHolds.delete(id);
      held.queuedRunHolds.get(id)?.release();
      held.queuedRunHolds.delete(id);
      deps.onFinished(done);
      return done;
    }
    if (prediction.request.agent) {
      throw new ConflictError(
        `Prediction ${id} runs on the agent runtime and cannot be stopped once started; it finishes on its own.`,
        'prediction_not_cancellable',
      );
    }
    if (!running.stopHere(id)) await deps.signals?.publish(PREDICTION_CANCEL_CHANNEL, id);
    return waitForEnd(deps, prediction);
  };
}

/** The record once its run stopped, or as it is after {@link STOP_WAIT_MS}. */
async function waitForEnd(deps: PredictionsServiceDeps, prediction: Prediction): Promise<Prediction> {
  let latest = prediction;
  for (let waited = 0; waited < STOP_WAIT_MS; waited += STOP_POLL_MS) {
    latest = (await deps.store.getById(prediction.id)) ?? latest;
    if (isTerminal(latest.status)) return latest;
    await sleep(STOP_POLL_MS);
  }
  return latest;
}
