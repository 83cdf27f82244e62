/**
 * Hub routes (open, no key needed): version, domains and their schemas; plus the older top-level
 * `/v1/domains`, `/v1/schema` and `/v1/models` that real clients still call.
 */
import { Router } from 'express';
import { z } from 'zod';
import type { HubService } from '../../services/hub/hub.service';
import { domainInfoSchema, toDomainInfo } from '../../wire/hub.schemas';
import { HUB_INFO_EXAMPLE } from '../api/examples';
import { declare, route } from '../api/route-declaration';
import { schemaResponseSchema, structuredModelListSchema } from '../api/response-schemas';

export const schemaBodySchema = z.object({
  domain: z.string().min(1),
  gql_stmt: z.string().nullish(),
  config: z.object({ gql_stmt: z.string().nullish() }).loose().nullish(),
});

const tag = 'Hub';
const domains = (summary: string) =>
  declare({
    method: 'get',
    path: '/domains',
    tag,
    summary,
    auth: 'open',
    responses: { 200: { description: 'The domains', schema: z.array(domainInfoSchema) } },
  });
const schema = (summary: string) =>
  declare({
    method: 'post',
    path: '/schema',
    tag,
    summary,
    auth: 'open',
    body: schemaBodySchema,
    responses: { 200: { description: "The domain's JSON schema", schema: schemaResponseSchema } },
    errors: [404],
  });

export const HUB_ROUTES = {
  info: declare({
    method: 'get',
    path: '/info',
    tag,
    summary: "The hub's version",
    auth: 'open',
    responses: {
      200: { description: 'The version', schema: z.object({ version: z.string() }), example: HUB_INFO_EXAMPLE },
    },
  }),
  domains: domains('The domains'),
  schema: schema("A domain's schema"),
};

export const LEGACY_HUB_ROUTES = {
  domains: domains('The domains (older route)'),
  schema: schema("A domain's schema (older route)"),
  models: declare({
    method: 'get',
    path: '/models',
    tag,
    summary: 'The structured models and their domains (older route)',
    auth: 'open',
    responses: { 200: { description: 'Model and domain pairs', schema: structuredModelListSchema } },
  }),
};

/** Mounted at `/v1/hub`. */
export function hubRoutes(hub: HubService): Router {
  const router = Router();
  route(router, HUB_ROUTES.info, (_req, res) => {
    res.json({ version: hub.version });
  });
  route(router, HUB_ROUTES.domains, (_req, res) => {
    res.json(hub.list().map(toDomainInfo));
  });
  route(router, HUB_ROUTES.schema, (_req, res, input) => {
    const body = input.body();
    res.json(hub.schema(body.domain, body.gql_stmt ?? body.config?.gql_stmt));
  });
  return router;
}

/** Mounted at `/v1`: the legacy catalogue routes. */
export function legacyHubRoutes(hub: HubService, models: readonly string[]): Router {
  const router = Router();
  route(router, LEGACY_HUB_ROUTES.domains, (_req, res) => {
    res.json(hub.list().map(toDomainInfo));
  });
  route(router, LEGACY_HUB_ROUTES.schema, (_req, res, input) => {
    const body = input.body();
    res.json(hub.schema(body.domain, body.gql_stmt ?? body.config?.gql_stmt));
  });
  route(router, LEGACY_HUB_ROUTES.models, (_req, res) => {
    res.json(models.flatMap((model) => hub.list().map((d) => ({ model, domain: d.domain }))));
  });
  return router;
}
