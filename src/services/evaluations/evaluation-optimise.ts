/**
 * `optimize`: feedback → a new version of a skill. Gathers the corrections, from a completed run's (or rerun's)
 * items or straight from a source's feedback, and hands them to the skill optimiser (skill-optimiser.ts).
 */
import type { Principal } from '../../domain/account';
import { BadRequestError, NotFoundError } from '../../domain/errors';
import type { EvaluationSourceType } from '../../domain/evaluation';
import { expectedFor } from './corrections';
import { checkSource, type EvaluationContext } from './evaluation-context';
import type { Correction } from './correction-rewrite';
import { createSkillOptimiser, type OptimiseRequest, type OptimiseResult } from './skill-optimiser';

export type Optimize = (principal: Principal, request: OptimiseRequest) => Promise<OptimiseResult>;

export function createOptimize(ctx: EvaluationContext): Optimize {
  const optimiser = createSkillOptimiser({ skills: ctx.skills, hub: ctx.hub, model: ctx.model, logger: ctx.logger });
  return (principal, request) => optimize(ctx, optimiser, principal, request);
}

async function optimize(
  ctx: EvaluationContext,
  optimiser: ReturnType<typeof createSkillOptimiser>,
  principal: Principal,
  request: OptimiseRequest,
): Promise<OptimiseResult> {
  const { store, model } = ctx;
  const orgId = await ctx.orgIdFor(principal);
  const fromRun = request.evaluationId ? await store.get(orgId, request.evaluationId) : null;
  if (request.evaluationId && !fromRun) throw new NotFoundError('evaluation', request.evaluationId);
  let corrections: Correction[];
  let source: { type: EvaluationSourceType; id: string };
  if (fromRun) {
    if (fromRun.status !== 'completed') {
      throw new BadRequestError(
        `Evaluation '${fromRun.id}' is ${fromRun.status}; optimize reads a completed one.`,
        null,
        'evaluation_id',
      );
    }
    source = { type: fromRun.sourceType, id: fromRun.sourceId };
    corrections = (await store.allItems(fromRun.id)).flatMap((item) => {
      const d = item.detail as { expected?: Record<string, unknown> | null; predicted?: unknown; after?: unknown };
      // A rerun's items keep the re-processed response under `after`.
      const predicted =
        fromRun.kind === 'rerun' ? (d.after as { predicted?: unknown } | undefined)?.predicted : d.predicted;
      return d.expected ? [{ entityId: item.entityId, expected: d.expected, predicted: predicted ?? null }] : [];
    });
  } else {
    if (!request.sourceType || !request.sourceId) {
      throw new BadRequestError('Send `evaluation_id`, or `source_type` and `source_id`.', null, 'evaluation_id');
    }
    const checked = await checkSource(ctx, principal, orgId, request.sourceType, request.sourceId);
    source = { type: request.sourceType, id: checked.sourceId };
    const items = await store.sourceItems(orgId, {
      sourceType: request.sourceType,
      sourceId: checked.sourceId,
      sourceVersion: checked.version,
      dataFrom: null,
      dataTo: null,
      maxItems: ctx.maxItems,
    });
    corrections = [];
    for (const item of items) {
      const predicted = item.status === 'completed' ? item.response : null;
      const e = await expectedFor(item.feedback, predicted, { infer: request.inferCorrections, model });
      if (e.expected) corrections.push({ entityId: item.entityId, expected: e.expected, predicted });
    }
  }
  return optimiser.optimise(principal, { ...request, source }, corrections);
}
