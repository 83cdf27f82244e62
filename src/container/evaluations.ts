/**
 * The evaluations part of the composition root: the SQLite evaluation store, the upstream chat model evaluations
 * may use (PRISM_EVAL_MODEL, else the first serving upstream chat model of the models file, else none), the
 * re-processing of stored predictions (and, through the agents module, of executions) for reruns, and the
 * evaluations service.
 */
import type { BlobStore } from '../blobs/types';
import type { ExtractionEngine } from '../engines/extraction-engine';
import { firstServingUpstreamChatModel, type ModelCatalogue } from '../gateway/catalogue/model-catalogue';
import type { UpstreamClient } from '../gateway/upstream/upstream-client';
import type { Principal } from '../domain/account';
import type { Logger } from '../lib/logger';
import { createEvaluationsService, type EvaluationsService } from '../services/evaluations/evaluations.service';
import { EVALUATION_MODEL_SETTING, type EvaluationModel } from '../services/evaluations/model';
import { createReprocess, type ReprocessExecution } from '../services/evaluations/reprocess';
import type { HubService } from '../services/hub/hub.service';
import type { SkillsService } from '../services/skills/skills.service';
import type { AgentStore } from '../stores/types/execution';
import type { EvaluationStore } from '../stores/types/evaluation';
import type { PredictionStore } from '../stores/types';
import { upstreamTextModel } from './upstream-text-model';

export interface EvaluationsModule {
  store: EvaluationStore;
  service: EvaluationsService;
  model: EvaluationModel | null;
}

export function createEvaluationsModule(deps: {
  store: EvaluationStore;
  predictions: PredictionStore;
  agents: AgentStore;
  blobs: BlobStore;
  engine: ExtractionEngine;
  hub: HubService;
  skills: SkillsService;
  catalogue: ModelCatalogue;
  upstream: UpstreamClient;
  /** Re-runs a stored execution with another skill (the agents module's execution re-run). */
  reprocessExecution: ReprocessExecution;
  config: { model: string | undefined; maxItems: number };
  orgIdFor: (principal: Principal) => Promise<string>;
  enqueue: (id: string) => void;
  logger: Logger;
}): EvaluationsModule {
  const { store } = deps;
  const model = evaluationModel(deps.catalogue, deps.upstream, deps.config.model);
  const service = createEvaluationsService({
    store,
    agents: deps.agents,
    skills: deps.skills,
    hub: deps.hub,
    model,
    reprocess: createReprocess({
      predictions: deps.predictions,
      blobs: deps.blobs,
      engine: deps.engine,
      hub: deps.hub,
    }),
    reprocessExecution: deps.reprocessExecution,
    orgIdFor: deps.orgIdFor,
    enqueue: deps.enqueue,
    maxItems: deps.config.maxItems,
    logger: deps.logger,
  });
  return { store, service, model };
}

/**
 * The named model (which must be an upstream chat model of the catalogue: a typo fails at start, not at the first
 * judge call), else the first serving upstream chat model, else null.
 */
function evaluationModel(
  catalogue: ModelCatalogue,
  upstream: UpstreamClient,
  named: string | undefined,
): EvaluationModel | null {
  const chat = catalogue.list('chat').filter((m) => m.engine.kind === 'upstream');
  const model = named ? catalogue.find(named) : firstServingUpstreamChatModel(catalogue);
  if (named && (!model || !chat.includes(model))) {
    throw new Error(`${EVALUATION_MODEL_SETTING}='${named}' is not an upstream chat model of the models file`);
  }
  return upstreamTextModel(catalogue, upstream, model);
}
