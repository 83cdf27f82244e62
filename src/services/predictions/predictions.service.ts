/**
 * Predictions: the generate endpoints' one service. It resolves and checks the input, stores it with a record,
 * runs the extraction now (synchronous requests) or through the job queue (`batch`), moves the record through
 * its statuses, validates the output against the schema, and hands finished records to the webhook sender.
 * Requests whose skills call for the agent runtime (skill-runner.ts says when) run through the SkillRunner port
 * instead of the extraction engine, with the same record, statuses, job queue and webhooks.
 *
 * A synchronous request may pass a cancel signal (the MCP extraction tools pass their call's): once it aborts, the
 * engines stop starting pages and frames, and the record ends `failed` saying the client cancelled, billed nothing.
 * `POST /v1/{kind}/generate` passes none: over HTTP a prediction is a resource that completes whether or not the
 * client waits for the response (it can be fetched by id later).
 *
 * Composed here from its use cases: create-prediction.ts (accept), prediction-run.ts (run one record),
 * prediction-resume.ts (the job queue's handler, after a restart), prediction-cancel.ts (stop one); the contract is
 * predictions.types.ts.
 */
import { NotFoundError } from '../../domain/errors';
import { createPredictionCreate } from './create-prediction';
import { createPredictionCancel, createRunningPredictions } from './prediction-cancel';
import { createPredictionResume } from './prediction-resume';
import { createPredictionRunner, createQueuedHolds } from './prediction-run';
import type { PredictionsService, PredictionsServiceDeps } from './predictions.types';

export function createPredictionsService(deps: PredictionsServiceDeps): PredictionsService {
  const { store } = deps;
  const held = createQueuedHolds();
  const runner = createPredictionRunner(deps, held);
  const running = createRunningPredictions(deps);
  return {
    create: createPredictionCreate(deps, runner, held),

    async get(principal, id) {
      const found = await store.get(await deps.orgIdFor(principal), id);
      if (!found) throw new NotFoundError('prediction', id);
      return found;
    },

    async list(principal, page) {
      return store.list(await deps.orgIdFor(principal), page);
    },

    cancel: createPredictionCancel(deps, held, running),

    ...createPredictionResume(deps, runner, held, running),
  };
}
