/**
 * `rerun`: the items of a completed run re-processed with another skill (named, or the source skill optimised from
 * the run's feedback first), scored again, before and after side by side. `startRerun` stores the record in
 * `running` and queues it; `rescore` (the job) re-processes each scored item — a stored prediction through the extraction engine, an agent
 * execution through the executions runtime — and stores the comparison.
 */
import { randomUUID } from 'node:crypto';
import { orgWorkPrincipal, type Principal } from '../../domain/account';
import { AppError, BadRequestError, NotFoundError } from '../../domain/errors';
import type { EvaluationItem, EvaluationRun, EvaluatorName } from '../../domain/evaluation';
import type { ParsedSkill, SkillRecord } from '../../domain/skill';
import { requireModel, round, scoreOptions, type EvaluationContext, type ItemDetail } from './evaluation-context';
import type { Optimize } from './evaluation-optimise';
import type { OptimiseResult } from './skill-optimiser';
import { scoreItem, summarise, type ItemScore } from './scoring';

export interface RerunInput {
  evaluationId: string;
  skillId: string | null;
  skillName: string | null;
  skillVersion: string | null;
}

export interface RerunStarted {
  run: EvaluationRun;
  parent: EvaluationRun;
  skill: SkillRecord;
  optimised: OptimiseResult | null;
}

const orgPrincipal = (orgId: string): Principal => orgWorkPrincipal(orgId, 'evaluations');

async function resolveTarget(ctx: EvaluationContext, principal: Principal, input: RerunInput): Promise<SkillRecord> {
  if (input.skillId) return ctx.skills.lookup(principal, { id: input.skillId });
  return ctx.skills.lookup(principal, { name: input.skillName, version: input.skillVersion });
}

/** Checks the parent and the skill (optimising the source skill when none is named), stores the rerun and queues it. */
export async function startRerun(
  ctx: EvaluationContext,
  optimize: Optimize,
  principal: Principal,
  input: RerunInput,
): Promise<RerunStarted> {
  const { store } = ctx;
  const orgId = await ctx.orgIdFor(principal);
  const parent = await store.get(orgId, input.evaluationId);
  if (!parent) throw new NotFoundError('evaluation', input.evaluationId);
  if (parent.kind !== 'run' || parent.status !== 'completed') {
    throw new BadRequestError(
      `Evaluation '${parent.id}' is ${parent.kind === 'run' ? parent.status : 'a rerun'}; rerun re-processes a completed run.`,
      null,
      'evaluation_id',
    );
  }
  requireModel(ctx, parent.config.evaluators);
  let optimised: OptimiseResult | null = null;
  let skill: SkillRecord;
  if (input.skillId || input.skillName) {
    skill = await resolveTarget(ctx, principal, input);
  } else {
    if (parent.sourceType !== 'skill') {
      throw new BadRequestError(
        'Name the skill to re-process with (`skill_id` or `skill_name`): only a skill source is optimized automatically.',
        null,
        'skill_id',
      );
    }
    optimised = await optimize(principal, {
      evaluationId: parent.id,
      sourceType: null,
      sourceId: null,
      skillId: null,
      skillName: parent.sourceId,
      inferCorrections: parent.config.inferCorrections,
      useModel: true,
    });
    skill = await ctx.skills.get(principal, optimised.skill.id);
  }
  const run: EvaluationRun = {
    ...parent,
    id: randomUUID(),
    kind: 'rerun',
    parentId: parent.id,
    status: 'running',
    config: { ...parent.config, skill: { id: skill.id, name: skill.name, skillVersion: skill.skillVersion } },
    accuracy: null,
    results: {},
    errorMessage: null,
    createdAt: ctx.now(),
    attempts: 0,
    completedAt: null,
  };
  await store.insert(run);
  ctx.enqueue(run.id);
  return { run, parent, skill, optimised };
}

/** The job of a rerun: re-processes the parent's scored items with the skill and stores before and after. */
export async function rescore(ctx: EvaluationContext, run: EvaluationRun): Promise<EvaluationRun | null> {
  const { store } = ctx;
  const parent = run.parentId ? await store.getById(run.parentId) : null;
  if (!parent) {
    throw new AppError(404, {
      message: 'the evaluation this rerun re-processes was deleted',
      type: 'not_found_error',
    });
  }
  const skillRef = run.config.skill;
  if (!skillRef) throw new Error('a rerun without a skill');
  const skill: ParsedSkill = await ctx.skills.resolve(orgPrincipal(run.orgId), {
    kind: 'id',
    id: skillRef.id,
    version: 'latest',
  });
  const options = scoreOptions(ctx, run.config);
  const parentItems = await store.allItems(parent.id);
  const before: ItemScore[] = [];
  const after: ItemScore[] = [];
  const skipped: Array<{ entity_type: string; entity_id: string; reason: string }> = [];
  const out: EvaluationItem[] = [];
  for (const item of parentItems) {
    const detail = item.detail as unknown as ItemDetail;
    if (!detail.expected) continue;
    let predicted: unknown;
    try {
      predicted =
        item.entityType === 'request'
          ? await ctx.reprocess(run.orgId, item.entityId, skill)
          : await ctx.reprocessExecution(run.orgId, item.entityId, skill);
    } catch (error) {
      skipped.push({ entity_type: item.entityType, entity_id: item.entityId, reason: (error as Error).message });
      continue;
    }
    const score = await scoreItem(detail.expected, predicted, options);
    const beforeScore: ItemScore = { scores: detail.scores, fields: detail.fields, judge: detail.judge };
    before.push(beforeScore);
    after.push(score);
    out.push({
      position: out.length,
      entityType: item.entityType,
      entityId: item.entityId,
      detail: {
        entity_type: item.entityType,
        entity_id: item.entityId,
        expected: detail.expected,
        before: { predicted: detail.predicted, scores: detail.scores },
        after: { predicted, scores: score.scores, fields: score.fields, judge: score.judge },
      },
    });
  }
  const evaluators = run.config.evaluators;
  const beforeSummary = summarise(before, evaluators, run.config.fuzzyThreshold);
  const afterSummary = summarise(after, evaluators, run.config.fuzzyThreshold);
  const primary = evaluators[0] as EvaluatorName;
  const comparison = Object.fromEntries(
    evaluators.map((e) => {
      const b = beforeSummary[e]?.accuracy ?? null;
      const a = afterSummary[e]?.accuracy ?? null;
      return [e, { before: b, after: a, delta: a !== null && b !== null ? round(a - b) : null }];
    }),
  );
  const paths = new Set([
    ...Object.keys(beforeSummary[primary]?.fields ?? {}),
    ...Object.keys(afterSummary[primary]?.fields ?? {}),
  ]);
  const fields = [...paths].sort().map((path) => ({
    path,
    before: beforeSummary[primary]?.fields[path]?.accuracy ?? null,
    after: afterSummary[primary]?.fields[path]?.accuracy ?? null,
  }));
  return store.finish(
    run.id,
    {
      status: 'completed',
      accuracy: afterSummary[primary]?.accuracy ?? null,
      apiCompletionRate: parent.apiCompletionRate,
      totalItems: parent.totalItems,
      totalWithFeedback: parent.totalWithFeedback,
      dataFrom: parent.dataFrom,
      dataTo: parent.dataTo,
      results: {
        primary_evaluator: primary,
        skill: { id: skill.record.id, name: skill.record.name, skill_version: skill.record.skillVersion },
        comparison,
        fields,
        before: beforeSummary,
        after: afterSummary,
        evaluators: afterSummary,
        items_reprocessed: out.length,
        skipped,
        notes: ['Re-processed responses are scored only; no prediction or execution is stored or billed.'],
      },
      errorMessage: null,
      completedAt: ctx.now(),
    },
    out,
  );
}
