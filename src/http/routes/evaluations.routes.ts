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
import { parseInput } from '../../wire/validation';

export function evaluationsRoutes(evaluations: EvaluationsService): Router {
  const router = Router();

  router.post('/run', async (req, res) => {
    const user = userOf(req);
    const body = parseInput(evaluationRunBodySchema, req.body, 'body');
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

  router.post('/optimize', async (req, res) => {
    const user = userOf(req);
    const body = parseInput(evaluationOptimizeBodySchema, req.body, 'body');
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

  router.post('/rerun', async (req, res) => {
    const user = userOf(req);
    const body = parseInput(evaluationRerunBodySchema, req.body, 'body');
    const started = await evaluations.rerun(user, {
      evaluationId: body.evaluation_id,
      skillId: body.skill_id ?? null,
      skillName: body.skill_name ?? null,
      skillVersion: body.skill_version ?? null,
    });
    res.status(200).json(toRerunWire(started));
  });

  router.get('/', async (req, res) => {
    const user = userOf(req);
    const q = parseInput(evaluationListQuerySchema, req.query, 'query');
    const { data, count } = await evaluations.list(user, {
      limit: q.limit,
      offset: q.offset,
      descending: q.descending,
      createdFrom: q.created_at__gte ?? null,
      createdTo: q.created_at__lte ?? null,
    });
    res.json({ data: data.map(toEvaluationWire), count });
  });

  router.get('/preview', async (req, res) => {
    const user = userOf(req);
    const q = parseInput(evaluationPreviewQuerySchema, req.query, 'query');
    const preview = await evaluations.preview(user, {
      sourceType: q.source_type,
      sourceId: q.source_id,
      dataFrom: q.data_from ?? null,
      dataTo: q.data_to ?? null,
    });
    res.json(toPreviewWire(preview));
  });

  router.get('/metrics', async (req, res) => {
    const user = userOf(req);
    const q = parseInput(evaluationMetricsQuerySchema, req.query, 'query');
    const runs = await evaluations.metrics(user, {
      limit: q.limit,
      sourceType: q.source_type ?? null,
      sourceLabel: q.source_label ?? null,
    });
    res.json({ data: runs.map(toMetricWire) });
  });

  router.get('/summary-stats', async (req, res) => {
    const counts = await evaluations.sourceCounts(userOf(req));
    res.json({ total_runs: counts.reduce((n, c) => n + c.count, 0), source_type_counts: counts });
  });

  router.get('/unique-sources', async (req, res) => {
    const counts = await evaluations.sourceCounts(userOf(req));
    res.json({ sources: counts.map(({ type, label }) => ({ type, label })) });
  });

  router.get('/:run_id', async (req, res) => {
    const user = userOf(req);
    const { run_id: id } = parseInput(evaluationParamsSchema, req.params, 'path');
    res.json(toEvaluationWire(await evaluations.get(user, id)));
  });

  router.get('/:run_id/results', async (req, res) => {
    const user = userOf(req);
    const { run_id: id } = parseInput(evaluationParamsSchema, req.params, 'path');
    const { limit, offset } = parseInput(evaluationResultsQuerySchema, req.query, 'query');
    const items = await evaluations.items(user, id, { offset, limit });
    res.json({ evaluation_id: id, offset, limit, items: items.map(toEvaluationItemWire) });
  });

  router.delete('/:run_id', async (req, res) => {
    const user = userOf(req);
    const { run_id: id } = parseInput(evaluationParamsSchema, req.params, 'path');
    res.json(toEvaluationWire(await evaluations.delete(user, id)));
  });

  return router;
}
