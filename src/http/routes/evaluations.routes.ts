/**
 * Evaluation routes: run, optimize and rerun; the run list with its count, one run, its
 * per-item results, preview of a source, metrics, summary stats, unique sources, and delete. Everything is scoped
 * to the caller's organisation and needs a key.
 */
import { Router } from 'express';
import type { EvaluationsService } from '../../services/evaluations/evaluations.service';
import { userOf } from '../request-context';
import {
  evaluationListQuerySchema,
  evaluationMetricsQuerySchema,
  evaluationOptimizeBodySchema,
  evaluationParamsSchema,
  evaluationPreviewQuerySchema,
  evaluationRerunBodySchema,
  evaluationResultsQuerySchema,
  evaluationRunBodySchema,
  toEvaluationItemWire,
  toEvaluationWire,
  toMetricWire,
  toOptimizeWire,
  toPreviewWire,
  toRerunWire,
} from '../../wire/evaluations.schemas';
import { z } from 'zod';
import { declare, route } from '../api/route-declaration';
import { evaluationListSchema, evaluationSchema } from '../api/response-schemas';

const tag = 'Evaluations';
const skillRef = z.looseObject({ id: z.string(), name: z.string(), skill_version: z.string() });
const sourceCount = z.looseObject({ type: z.string(), label: z.string().nullable(), count: z.number().int() });
const optimizeSchema = z.looseObject({
  skill: skillRef,
  previous_skill: skillRef.nullable(),
  mode: z.string(),
  note: z.string().nullable(),
  reviewed_items: z.number().int(),
  corrected_items: z.number().int(),
  changes: z.unknown(),
  cited_cases: z.array(z.record(z.string(), z.unknown())),
});

export const EVALUATION_ROUTES = {
  run: declare({
    method: 'post',
    path: '/run',
    tag,
    summary: "Score a skill's or agent's answers against the feedback on them",
    auth: 'key',
    body: evaluationRunBodySchema,
    responses: { 200: { description: 'The evaluation', schema: evaluationSchema } },
    errors: [400, 404],
  }),
  optimize: declare({
    method: 'post',
    path: '/optimize',
    tag,
    summary: 'A new skill version from the corrections an evaluation found',
    auth: 'key',
    body: evaluationOptimizeBodySchema,
    responses: { 200: { description: 'The new version and what changed', schema: optimizeSchema } },
    errors: [400, 404, 502],
  }),
  rerun: declare({
    method: 'post',
    path: '/rerun',
    tag,
    summary: 'Run an evaluation again on a (new) skill version',
    auth: 'key',
    body: evaluationRerunBodySchema,
    responses: {
      200: {
        description: 'The new evaluation, with the skill it runs',
        schema: evaluationSchema.extend({ skill: skillRef, optimized: optimizeSchema.nullable() }),
      },
    },
    errors: [400, 404],
  }),
  list: declare({
    method: 'get',
    path: '/',
    tag,
    summary: 'List evaluations',
    auth: 'key',
    query: evaluationListQuerySchema,
    responses: {
      200: { description: 'A page', schema: z.looseObject({ data: evaluationListSchema, count: z.number().int() }) },
    },
  }),
  preview: declare({
    method: 'get',
    path: '/preview',
    tag,
    summary: 'What an evaluation of a source would cover',
    auth: 'key',
    query: evaluationPreviewQuerySchema,
    responses: {
      200: {
        description: 'The counts',
        schema: z.looseObject({
          total_items: z.number().int(),
          total_with_feedback: z.number().int(),
          feedback_with_corrections: z.number().int(),
          latest_item_at: z.string().nullable(),
        }),
      },
    },
  }),
  metrics: declare({
    method: 'get',
    path: '/metrics',
    tag,
    summary: 'Accuracy over time',
    auth: 'key',
    query: evaluationMetricsQuerySchema,
    responses: {
      200: { description: 'Runs', schema: z.looseObject({ data: z.array(z.record(z.string(), z.unknown())) }) },
    },
  }),
  summary: declare({
    method: 'get',
    path: '/summary-stats',
    tag,
    summary: 'Totals',
    auth: 'key',
    responses: {
      200: {
        description: 'Totals by source type',
        schema: z.looseObject({ total_runs: z.number().int(), source_type_counts: z.array(sourceCount) }),
      },
    },
  }),
  sources: declare({
    method: 'get',
    path: '/unique-sources',
    tag,
    summary: 'The sources evaluated',
    auth: 'key',
    responses: {
      200: {
        description: 'Sources',
        schema: z.looseObject({ sources: z.array(z.looseObject({ type: z.string(), label: z.string().nullable() })) }),
      },
    },
  }),
  get: declare({
    method: 'get',
    path: '/:run_id',
    tag,
    summary: 'One evaluation',
    auth: 'key',
    params: evaluationParamsSchema,
    responses: { 200: { description: 'The evaluation', schema: evaluationSchema } },
    errors: [404],
  }),
  results: declare({
    method: 'get',
    path: '/:run_id/results',
    tag,
    summary: "An evaluation's items",
    auth: 'key',
    params: evaluationParamsSchema,
    query: evaluationResultsQuerySchema,
    responses: {
      200: {
        description: 'A page of items',
        schema: z.looseObject({
          evaluation_id: z.string(),
          offset: z.number().int(),
          limit: z.number().int(),
          items: z.array(z.record(z.string(), z.unknown())),
        }),
      },
    },
    errors: [404],
  }),
  delete: declare({
    method: 'delete',
    path: '/:run_id',
    tag,
    summary: 'Delete an evaluation',
    auth: 'key',
    params: evaluationParamsSchema,
    responses: { 200: { description: 'The deleted evaluation', schema: evaluationSchema } },
    errors: [404],
  }),
};

export function evaluationsRoutes(evaluations: EvaluationsService): Router {
  const router = Router();

  route(router, EVALUATION_ROUTES.run, async (req, res, input) => {
    const user = userOf(req);
    const body = input.body();
    const run = await evaluations.run(user, {
      sourceType: body.source_type,
      sourceId: body.source_id,
      evaluators: body.evaluators,
      inferCorrections: body.infer_corrections,
      skipNullExpected: body.skip_null_expected,
      fuzzyThreshold: body.fuzzy_threshold,
      dataFrom: body.data_from ?? null,
      dataTo: body.data_to ?? null,
      maxItems: body.limit ?? null,
    });
    res.status(200).json(toEvaluationWire(run));
  });

  route(router, EVALUATION_ROUTES.optimize, async (req, res, input) => {
    const user = userOf(req);
    const body = input.body();
    const result = await evaluations.optimize(user, {
      evaluationId: body.evaluation_id ?? null,
      sourceType: body.source_type ?? null,
      sourceId: body.source_id ?? null,
      skillId: body.skill_id ?? null,
      skillName: body.skill_name ?? null,
      inferCorrections: body.infer_corrections,
      useModel: body.use_model,
    });
    res.status(200).json(toOptimizeWire(result));
  });

  route(router, EVALUATION_ROUTES.rerun, async (req, res, input) => {
    const user = userOf(req);
    const body = input.body();
    const started = await evaluations.rerun(user, {
      evaluationId: body.evaluation_id,
      skillId: body.skill_id ?? null,
      skillName: body.skill_name ?? null,
      skillVersion: body.skill_version ?? null,
    });
    res.status(200).json(toRerunWire(started));
  });

  route(router, EVALUATION_ROUTES.list, async (req, res, input) => {
    const user = userOf(req);
    const q = input.query();
    const { data, count } = await evaluations.list(user, {
      limit: q.limit,
      offset: q.offset,
      descending: q.descending,
      createdFrom: q.created_at__gte ?? null,
      createdTo: q.created_at__lte ?? null,
    });
    res.json({ data: data.map(toEvaluationWire), count });
  });

  route(router, EVALUATION_ROUTES.preview, async (req, res, input) => {
    const user = userOf(req);
    const q = input.query();
    const preview = await evaluations.preview(user, {
      sourceType: q.source_type,
      sourceId: q.source_id,
      dataFrom: q.data_from ?? null,
      dataTo: q.data_to ?? null,
    });
    res.json(toPreviewWire(preview));
  });

  route(router, EVALUATION_ROUTES.metrics, async (req, res, input) => {
    const user = userOf(req);
    const q = input.query();
    const runs = await evaluations.metrics(user, {
      limit: q.limit,
      sourceType: q.source_type ?? null,
      sourceLabel: q.source_label ?? null,
    });
    res.json({ data: runs.map(toMetricWire) });
  });

  route(router, EVALUATION_ROUTES.summary, async (req, res) => {
    const counts = await evaluations.sourceCounts(userOf(req));
    res.json({ total_runs: counts.reduce((n, c) => n + c.count, 0), source_type_counts: counts });
  });

  route(router, EVALUATION_ROUTES.sources, async (req, res) => {
    const counts = await evaluations.sourceCounts(userOf(req));
    res.json({ sources: counts.map(({ type, label }) => ({ type, label })) });
  });

  route(router, EVALUATION_ROUTES.get, async (req, res, input) => {
    const user = userOf(req);
    const { run_id: id } = input.params();
    res.json(toEvaluationWire(await evaluations.get(user, id)));
  });

  route(router, EVALUATION_ROUTES.results, async (req, res, input) => {
    const user = userOf(req);
    const { run_id: id } = input.params();
    const { limit, offset } = input.query();
    const items = await evaluations.items(user, id, { offset, limit });
    res.json({ evaluation_id: id, offset, limit, items: items.map(toEvaluationItemWire) });
  });

  route(router, EVALUATION_ROUTES.delete, async (req, res, input) => {
    const user = userOf(req);
    const { run_id: id } = input.params();
    res.json(toEvaluationWire(await evaluations.delete(user, id)));
  });

  return router;
}
