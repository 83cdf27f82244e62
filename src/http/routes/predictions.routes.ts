/**
 * Prediction routes: list, get, and the domain a prediction was made for. Org-scoped in the service.
 */
import { Router } from 'express';
import type { HubService } from '../../services/hub/hub.service';
import type { PredictionsService } from '../../services/predictions/predictions.types';
import { userOf } from '../request-context';
import { listPredictionsQuerySchema, predictionIdParamsSchema, toPredictionWire } from '../../wire/predictions.schemas';
import { parseInput } from '../../wire/validation';

export function predictionsRoutes(predictions: PredictionsService, hub: HubService): Router {
  const router = Router();

  router.get('/', async (req, res) => {
    const page = parseInput(listPredictionsQuerySchema, req.query, 'query');
    res.json((await predictions.list(userOf(req), page)).map(toPredictionWire));
  });

  router.get('/:id', async (req, res) => {
    const { id } = parseInput(predictionIdParamsSchema, req.params, 'path');
    res.json(toPredictionWire(await predictions.get(userOf(req), id)));
  });

  router.get('/:id/domain', async (req, res) => {
    const { id } = parseInput(predictionIdParamsSchema, req.params, 'path');
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
