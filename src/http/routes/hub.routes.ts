/**
 * Hub routes (open, no key needed): version, domains and their schemas; plus the older top-level
 * `/v1/domains`, `/v1/schema` and `/v1/models` that real clients still call.
 */
import { Router } from 'express';
import { z } from 'zod';
import type { HubService } from '../../services/hub/hub.service';
import { toDomainInfo } from '../../wire/hub.schemas';
import { parseInput } from '../../wire/validation';

export const schemaBodySchema = z.object({
  domain: z.string().min(1),
  gql_stmt: z.string().nullish(),
  config: z.object({ gql_stmt: z.string().nullish() }).loose().nullish(),
});

/** Mounted at `/v1/hub`. */
export function hubRoutes(hub: HubService): Router {
  const router = Router();
  router.get('/info', (_req, res) => {
    res.json({ version: hub.version });
  });
  router.get('/domains', (_req, res) => {
    res.json(hub.list().map(toDomainInfo));
  });
  router.post('/schema', (req, res) => {
    const body = parseInput(schemaBodySchema, req.body, 'body');
    res.json(hub.schema(body.domain, body.gql_stmt ?? body.config?.gql_stmt));
  });
  return router;
}

/** Mounted at `/v1`: the legacy catalogue routes. */
export function legacyHubRoutes(hub: HubService, models: readonly string[]): Router {
  const router = Router();
  router.get('/domains', (_req, res) => {
    res.json(hub.list().map(toDomainInfo));
  });
  router.post('/schema', (req, res) => {
    const body = parseInput(schemaBodySchema, req.body, 'body');
    res.json(hub.schema(body.domain, body.gql_stmt ?? body.config?.gql_stmt));
  });
  router.get('/models', (_req, res) => {
    res.json(models.flatMap((model) => hub.list().map((d) => ({ model, domain: d.domain }))));
  });
  return router;
}
