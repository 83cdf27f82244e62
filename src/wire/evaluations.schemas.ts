/**
 * Wire shapes of evaluations: the run, optimize and rerun bodies (not public on the
 * hosted platform, so ours are documented in docs/evaluations.md), the read routes' queries with their bounds, and the
 * EvaluationRun record with the PY-eval field names.
 */
import { z } from 'zod';
import { EVALUATION_SOURCE_TYPES, EVALUATORS, type EvaluationItem, type EvaluationRun } from '../domain/evaluation';
import type { SkillRecord } from '../domain/skill';
import type { OptimiseResult } from '../services/evaluations/skill-optimiser';
import type { Preview, RerunStarted } from '../services/evaluations/evaluations.service';
import { queryBool, queryInt } from './common.schemas';

/** An ISO 8601 date or date-time (with or without offset), as a Date. */
const isoDate = z
  .union([z.iso.datetime({ offset: true, local: true }), z.iso.date()])
  .transform((v) => new Date(v.length === 10 ? `${v}T00:00:00Z` : v));

const sourceType = z.enum(EVALUATION_SOURCE_TYPES);
const sourceId = z.string().trim().min(1).max(300);

export const DEFAULT_FUZZY_THRESHOLD = 0.85;

export const evaluationRunBodySchema = z.object({
  source_type: sourceType,
  source_id: sourceId,
  evaluators: z
    .array(z.enum(EVALUATORS))
    .min(1)
    .max(EVALUATORS.length)
    .refine((list) => new Set(list).size === list.length, 'evaluators must not repeat')
    .default(['field_accuracy']),
  infer_corrections: z.boolean().default(false),
  skip_null_expected: z.boolean().default(true),
  fuzzy_threshold: z.number().min(0).max(1).default(DEFAULT_FUZZY_THRESHOLD),
  data_from: isoDate.nullish(),
  data_to: isoDate.nullish(),
  limit: z.number().int().min(1).max(100_000).nullish(),
});

export const evaluationOptimizeBodySchema = z.object({
  evaluation_id: z.string().min(1).max(200).nullish(),
  source_type: sourceType.nullish(),
  source_id: sourceId.nullish(),
  skill_id: z.string().min(1).max(200).nullish(),
  skill_name: z.string().min(1).max(64).nullish(),
  infer_corrections: z.boolean().default(false),
  use_model: z.boolean().default(true),
});

export const evaluationRerunBodySchema = z.object({
  evaluation_id: z.string().min(1).max(200),
  skill_id: z.string().min(1).max(200).nullish(),
  skill_name: z.string().min(1).max(64).nullish(),
  skill_version: z.string().min(1).max(64).nullish(),
});

export const evaluationListQuerySchema = z.object({
  limit: queryInt({ min: 1, max: 100, default: 30 }),
  offset: queryInt({ min: 0, default: 0 }),
  order_by: z.enum(['created_at']).default('created_at'),
  descending: queryBool(true),
  created_at__gte: isoDate.optional(),
  created_at__lte: isoDate.optional(),
});

export const evaluationPreviewQuerySchema = z.object({
  source_type: sourceType,
  source_id: sourceId,
  data_from: isoDate.optional(),
  data_to: isoDate.optional(),
});

export const evaluationMetricsQuerySchema = z.object({
  limit: queryInt({ min: 1, max: 100, default: 20 }),
  source_type: sourceType.optional(),
  source_label: z.string().min(1).max(300).optional(),
});

export const evaluationResultsQuerySchema = z.object({
  limit: queryInt({ min: 1, max: 1000, default: 100 }),
  offset: queryInt({ min: 0, default: 0 }),
});

export const evaluationParamsSchema = z.object({ run_id: z.string().min(1).max(200) });

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

export function toEvaluationWire(run: EvaluationRun) {
  return {
    id: run.id,
    source_type: run.sourceType,
    source_id: run.sourceId,
    source_label: run.sourceLabel,
    source_version: run.sourceVersion,
    status: run.status,
    accuracy: run.accuracy,
    api_completion_rate: run.apiCompletionRate,
    total_items: run.totalItems,
    total_with_feedback: run.totalWithFeedback,
    data_from: iso(run.dataFrom),
    data_to: iso(run.dataTo),
    results: run.results,
    created_at: run.createdAt.toISOString(),
    completed_at: iso(run.completedAt),
    kind: run.kind,
    parent_id: run.parentId,
    evaluators: run.config.evaluators,
    infer_corrections: run.config.inferCorrections,
    skip_null_expected: run.config.skipNullExpected,
    skill: run.config.skill
      ? { id: run.config.skill.id, name: run.config.skill.name, skill_version: run.config.skill.skillVersion }
      : null,
    error: run.errorMessage,
  };
}

export function toEvaluationItemWire(item: EvaluationItem) {
  return { position: item.position, ...item.detail };
}

export function toPreviewWire(p: Preview) {
  return {
    total_items: p.totalItems,
    total_with_feedback: p.totalWithFeedback,
    feedback_with_corrections: p.feedbackWithCorrections,
    latest_item_at: iso(p.latestItemAt),
  };
}

export function toMetricWire(run: EvaluationRun) {
  return {
    id: run.id,
    source_type: run.sourceType,
    source_label: run.sourceLabel,
    source_version: run.sourceVersion,
    accuracy: run.accuracy,
    api_completion_rate: run.apiCompletionRate,
    total_items: run.totalItems,
    total_with_feedback: run.totalWithFeedback,
    created_at: run.createdAt.toISOString(),
  };
}

const skillWire = (s: SkillRecord) => ({
  id: s.id,
  name: s.name,
  skill_version: s.skillVersion,
  description: s.description,
  created_at: s.createdAt.toISOString(),
});

export function toOptimizeWire(o: OptimiseResult) {
  return {
    skill: skillWire(o.skill),
    previous_skill: o.previous ? skillWire(o.previous) : null,
    mode: o.mode,
    note: o.note,
    reviewed_items: o.reviewedItems,
    corrected_items: o.correctedItems,
    changes: o.changes,
    cited_cases: o.cases.map((c) => ({
      entity_id: c.entityId,
      path: c.path,
      predicted: c.predicted,
      expected: c.expected,
    })),
  };
}

export function toRerunWire(r: RerunStarted) {
  return {
    ...toEvaluationWire(r.run),
    skill: skillWire(r.skill),
    optimized: r.optimised ? toOptimizeWire(r.optimised) : null,
    before: {
      id: r.parent.id,
      accuracy: r.parent.accuracy,
      evaluators: (r.parent.results as { evaluators?: unknown }).evaluators ?? null,
    },
  };
}
