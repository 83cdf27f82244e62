/**
 * `run`: an evaluation of a source's stored responses. `startRun` checks the request, stores the record in
 * `running` and queues it; `evaluate` (the job) reads the source's items, works out what each should have been from
 * its feedback, scores it with the chosen evaluators and stores the summary and the per-item details.
 */
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../domain/account';
import type { EvaluationRun, EvaluationSourceType, EvaluatorName } from '../../domain/evaluation';
import { expectedFor } from './corrections';
import {
  checkSource,
  requireModel,
  round,
  scoreOptions,
  type EvaluationContext,
  type ItemDetail,
} from './evaluation-context';
import { EVALUATION_MODEL_SETTING } from './model';
import { scoreItem, summarise } from './scoring';

export interface RunInput {
  sourceType: EvaluationSourceType;
  sourceId: string;
  evaluators: EvaluatorName[];
  inferCorrections: boolean;
  skipNullExpected: boolean;
  fuzzyThreshold: number;
  dataFrom: Date | null;
  dataTo: Date | null;
  maxItems: number | null;
}

/** Stores a new run in `running` and queues it; returns it at once. */
export async function startRun(ctx: EvaluationContext, principal: Principal, input: RunInput): Promise<EvaluationRun> {
  requireModel(ctx, input.evaluators);
  const orgId = await ctx.orgIdFor(principal);
  const source = await checkSource(ctx, principal, orgId, input.sourceType, input.sourceId);
  const run: EvaluationRun = {
    id: randomUUID(),
    orgId,
    kind: 'run',
    parentId: null,
    sourceType: input.sourceType,
    sourceId: source.sourceId,
    sourceLabel: source.label,
    sourceVersion: source.version,
    status: 'running',
    config: {
      evaluators: input.evaluators,
      inferCorrections: input.inferCorrections,
      skipNullExpected: input.skipNullExpected,
      fuzzyThreshold: input.fuzzyThreshold,
      maxItems: Math.min(input.maxItems ?? ctx.maxItems, ctx.maxItems),
      skill: null,
    },
    accuracy: null,
    apiCompletionRate: null,
    totalItems: 0,
    totalWithFeedback: 0,
    dataFrom: input.dataFrom,
    dataTo: input.dataTo,
    results: {},
    errorMessage: null,
    createdAt: ctx.now(),
    attempts: 0,
    completedAt: null,
  };
  await ctx.store.insert(run);
  ctx.enqueue(run.id);
  return run;
}

/** The job of a run: scores the source's items and stores the finished run. */
export async function evaluate(ctx: EvaluationContext, run: EvaluationRun): Promise<EvaluationRun | null> {
  const { store, model } = ctx;
  const items = await store.sourceItems(run.orgId, {
    sourceType: run.sourceType,
    sourceId: run.sourceId,
    sourceVersion: run.sourceVersion,
    dataFrom: run.dataFrom,
    dataTo: run.dataTo,
    maxItems: run.config.maxItems,
  });
  const options = scoreOptions(ctx, run.config);
  const details: ItemDetail[] = [];
  const inferred = { response: 0, inferred_model: 0, inferred_rules: 0, not_inferred: 0 };
  for (const item of items) {
    const predicted = item.status === 'completed' ? item.response : null;
    const expected = await expectedFor(item.feedback, predicted, {
      infer: run.config.inferCorrections,
      model,
    });
    if (expected.source) inferred[expected.source] += 1;
    else if (item.feedback) inferred.not_inferred += 1;
    const score = expected.expected ? await scoreItem(expected.expected, predicted, options) : null;
    details.push({
      entity_type: item.entityType,
      entity_id: item.entityId,
      status: item.status,
      created_at: item.createdAt.toISOString(),
      has_feedback: item.feedback !== null,
      corrections: expected.source,
      note: expected.note,
      expected: expected.expected,
      predicted,
      scores: score?.scores ?? {},
      fields: score?.fields ?? [],
      judge: score?.judge ?? null,
    });
  }
  const scored = details.filter((d) => d.expected !== null);
  const summary = summarise(scored, run.config.evaluators, run.config.fuzzyThreshold);
  const primary = run.config.evaluators[0] as EvaluatorName;
  const notes: string[] = [];
  if (run.config.inferCorrections && !model && inferred.inferred_rules + inferred.not_inferred > 0) {
    notes.push(
      `No upstream model (${EVALUATION_MODEL_SETTING}): corrections were inferred from notes by deterministic rules ` +
        'only (explicit "<field> should be <value>" / "<field>: <value>" statements about fields of the response).',
    );
  }
  const completed = items.filter((i) => i.status === 'completed').length;
  const dates = items.map((i) => i.createdAt.getTime());
  return store.finish(
    run.id,
    {
      status: 'completed',
      accuracy: summary[primary]?.accuracy ?? null,
      apiCompletionRate: items.length === 0 ? null : round(completed / items.length),
      totalItems: items.length,
      totalWithFeedback: items.filter((i) => i.feedback !== null).length,
      dataFrom: run.dataFrom ?? (dates.length ? new Date(Math.min(...dates)) : null),
      dataTo: run.dataTo ?? (dates.length ? new Date(Math.max(...dates)) : null),
      results: {
        primary_evaluator: primary,
        evaluators: summary,
        items_scored: scored.length,
        corrections: inferred,
        fuzzy_threshold: run.config.fuzzyThreshold,
        notes,
      },
      errorMessage: null,
      completedAt: ctx.now(),
    },
    details.map((detail, position) => ({
      position,
      entityType: detail.entity_type,
      entityId: detail.entity_id,
      detail: detail as unknown as Record<string, unknown>,
    })),
  );
}
