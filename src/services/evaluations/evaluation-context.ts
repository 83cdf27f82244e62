/**
 * What the evaluation modules share: the service's dependencies (with a clock), the per-item record a run stores
 * and a rerun reads back, and the checks and scoring options that run, optimise and rerun all apply. Kept apart so
 * that evaluation-run, evaluation-optimise and evaluation-rerun depend on it and not on each other or the facade.
 */
import type { Principal } from '../../domain/account';
import { BadRequestError, NotFoundError } from '../../domain/errors';
import type { EvaluationConfig, EvaluationSourceType, EvaluatorName, SourceItem } from '../../domain/evaluation';
import type { Logger } from '../../lib/logger';
import type { AgentStore } from '../../stores/types/execution';
import type { EvaluationStore } from '../../stores/types/evaluation';
import { isUuid } from '../../lib/uuid';
import type { HubService } from '../hub/hub.service';
import type { SkillsService } from '../skills/skills.service';
import { judgeItem } from './judge';
import { EVALUATION_MODEL_SETTING, type EvaluationModel } from './model';
import type { Reprocess, ReprocessExecution } from './reprocess';
import type { FieldVerdict, ItemScore, ScoreOptions } from './scoring';

export interface EvaluationsServiceDeps {
  store: EvaluationStore;
  agents: AgentStore;
  skills: SkillsService;
  hub: HubService;
  /** The upstream chat model for llm_judge, inferring corrections and rewriting instructions; null without one. */
  model: EvaluationModel | null;
  reprocess: Reprocess;
  /** Re-runs a stored agent execution with another skill, for `rerun`. */
  reprocessExecution: ReprocessExecution;
  orgIdFor: (principal: Principal) => Promise<string>;
  enqueue: (id: string) => void;
  /** Most items one run reads (newest first). */
  maxItems: number;
  logger: Logger;
  now?: () => Date;
}

/** The dependencies as the modules use them: the clock is always there. */
export type EvaluationContext = EvaluationsServiceDeps & { now: () => Date };

/** What a run stores per item (and a rerun reads back from its parent). */
export interface ItemDetail {
  entity_type: SourceItem['entityType'];
  entity_id: string;
  status: string;
  created_at: string;
  has_feedback: boolean;
  corrections: string | null;
  note: string | null;
  expected: Record<string, unknown> | null;
  predicted: unknown;
  scores: ItemScore['scores'];
  fields: FieldVerdict[];
  judge: ItemScore['judge'];
}

export const round = (n: number): number => Math.round(n * 10_000) / 10_000;

/** llm_judge needs an upstream chat model: without one it is a 400 before anything is stored. */
export function requireModel(ctx: EvaluationContext, evaluators: EvaluatorName[]): void {
  if (evaluators.includes('llm_judge') && !ctx.model) {
    throw new BadRequestError(
      `The llm_judge evaluator needs an upstream chat model, and this server has none: set ${EVALUATION_MODEL_SETTING} ` +
        'to a chat model of the models file (PRISM_MODELS_FILE) served by an upstream, or choose field_accuracy, ' +
        'fuzzy_field_match or equals_expected.',
      'evaluation_model_unavailable',
      'evaluators',
    );
  }
}

/** Checks the source exists for the caller and returns its id, label and version as stored. */
export async function checkSource(
  ctx: EvaluationContext,
  principal: Principal,
  orgId: string,
  type: EvaluationSourceType,
  sourceId: string,
): Promise<{ sourceId: string; label: string; version: string | null }> {
  if (type === 'request_domain') {
    if (!ctx.hub.find(sourceId)) throw new NotFoundError('domain', sourceId);
    return { sourceId, label: sourceId, version: null };
  }
  if (type === 'skill') {
    const record = await ctx.skills.lookup(principal, isUuid(sourceId) ? { id: sourceId } : { name: sourceId });
    return { sourceId: record.name, label: record.name, version: null };
  }
  const at = sourceId.lastIndexOf(':');
  const name = at > 0 ? sourceId.slice(0, at) : sourceId;
  const version = at > 0 ? sourceId.slice(at + 1) : null;
  const agent = await ctx.agents.findByName(orgId, name, version);
  if (!agent) throw new NotFoundError('agent', sourceId);
  return { sourceId: name, label: version ? `${name}:${version}` : name, version };
}

/** The scoring options of a run's config, the judge bound to the model. */
export function scoreOptions(ctx: EvaluationContext, config: EvaluationConfig): ScoreOptions {
  const { model } = ctx;
  return {
    evaluators: config.evaluators,
    skipNullExpected: config.skipNullExpected,
    fuzzyThreshold: config.fuzzyThreshold,
    judge: config.evaluators.includes('llm_judge')
      ? (expected, predicted) => {
          if (!model) throw new Error(`no judge model (${EVALUATION_MODEL_SETTING} is not set)`);
          return judgeItem(model, expected, predicted);
        }
      : null,
  };
}
