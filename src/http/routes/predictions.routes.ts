/**
 * Prediction routes: list, get, and the domain a prediction was made for. Org-scoped in the service.
 */
import { Router } from 'express';
import type { HubService } from '../../services/hub/hub.service';
import type { PredictionsService } from '../../services/predictions/predictions.types';
import { userOf } from '../request-context';
import { listPredictionsQuerySchema, predictionIdParamsSchema, toPredictionWire } from '../../wire/predictions.schemas';
import { PREDICTION_EXAMPLE } from '../api/examples';
import { declare, route } from '../api/route-declaration';
import { predictionDomainSchema, predictionListSchema, predictionSchema } from '../api/response-schemas';

const tag = 'Extraction';

export const PREDICTION_ROUTES = {
  list: declare({
    method: 'get',
    path: '/',
    tag,
    summary: 'List predictions',
    auth: 'key',
    query: listPredictionsQuerySchema,
    responses: { 200: { description: 'Predictions, newest first', schema: predictionListSchema } },
  }),
  get: declare({
    method: 'get',
    path: '/:id',
    tag,
    summary: 'One prediction (poll it until `completed` or `failed`)',
    auth: 'key',
    params: predictionIdParamsSchema,
    responses: { 200: { description: 'The prediction', schema: predictionSchema, example: PREDICTION_EXAMPLE } },
    errors: [404],
  }),
  domain: declare({
    method: 'get',
    path: '/:id/domain',
    tag,
    summary: "A prediction's domain",
    auth: 'key',
    params: predictionIdParamsSchema,
    responses: { 200: { description: 'The domain it was made for', schema: predictionDomainSchema } },
    errors: [404],
  }),
};

export function predictionsRoutes(predictions: PredictionsService, hub: HubService): Router {
  const router = Router();

  route(router, PREDICTION_ROUTES.list, async (req, res, input) => {
    const page = input.query();
    res.json((await predictions.list(userOf(req), page)).map(toPredictionWire));
  });

  route(router, PREDICTION_ROUTES.get, async (req, res, input) => {
    const { id } = input.params();
    res.json(toPredictionWire(await predictions.get(userOf(req), id)));
  });

  route(router, PREDICTION_ROUTES.domain, async (req, res, input) => {
    const { id } = input.params();
    const prediction = await predictions.get(userOf(req), id);
    const domain = prediction.domain ? hub.find(prediction.domain) : null;
    res.json({
      id: prediction.id,
      domain: prediction.domain,
      model: prediction.model,
      kind: prediction.kind,
      description: domain?.description ?? null,
      schema_version: domain ? hub.version : null,
      schema_hash: domain?.schemaHash ?? null,
      custom_schema: prediction.request.jsonSchema !== null,
    });
  });

  return router;
}
