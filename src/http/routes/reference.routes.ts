/**
 * The pages a person opens: the API reference (`/openapi.json`, built once from the routes' zod schemas, and
 * `/docs`, Swagger UI served from the swagger-ui-dist package, so it works with no network) and `/playground`.
 */
import path from 'node:path';
import express, { Router, type Express } from 'express';
import { z } from 'zod';
import { declare, route } from '../api/route-declaration';
import { buildOpenApiDocument } from '../openapi/openapi-document';
import { PLAYGROUND_HTML } from '../../playground/playground-page';
import { RUNS_HTML } from '../../playground/runs-page';

const INITIALIZER = `window.onload = () => {
  window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout' });
};
`;

const tag = 'Pages';

export const REFERENCE_ROUTES = {
  openapi: declare({
    method: 'get',
    path: '/openapi.json',
    tag,
    summary: 'This document (OpenAPI 3.1)',
    auth: 'open',
    responses: {
      200: {
        description: 'The document',
        schema: z.looseObject({
          openapi: z.string(),
          info: z.looseObject({ title: z.string() }),
          paths: z.record(z.string(), z.unknown()),
        }),
      },
    },
  }),
  docs: declare({
    method: 'get',
    path: '/docs',
    tag,
    summary: 'Swagger UI for this document (served from the package, no network); `/docs` redirects to `/docs/`',
    auth: 'open',
    responses: {
      200: { description: 'The Swagger UI page', contentType: 'text/html' },
      301: { description: 'To `/docs/`' },
    },
  }),
  swaggerInitializer: declare({
    method: 'get',
    path: '/docs/swagger-initializer.js',
    tag,
    summary: "Swagger UI's start script, pointed at /openapi.json",
    auth: 'open',
    responses: { 200: { description: 'JavaScript', contentType: 'text/plain' } },
  }),
  playground: declare({
    method: 'get',
    path: '/playground',
    tag,
    summary: 'The playground: try extraction, chat and agents in a browser (docs/README.md)',
    auth: 'open',
    responses: { 200: { description: 'The page', contentType: 'text/html' } },
  }),
  playgroundRuns: declare({
    method: 'get',
    path: '/playground/runs',
    tag,
    summary: "The playground's page of agent runs and their events",
    auth: 'open',
    responses: { 200: { description: 'The page', contentType: 'text/html' } },
  }),
};

/** `app` is the app this router is mounted in: the document describes the routes it serves. */
export function referenceRoutes(version: string, licence: string, app: () => Express): Router {
  const router = Router();
  let document: string | undefined;
  route(router, REFERENCE_ROUTES.openapi, (_req, res) => {
    document ??= JSON.stringify(buildOpenApiDocument(app(), version, licence));
    res.type('application/json').send(document);
  });
  route(router, REFERENCE_ROUTES.swaggerInitializer, (_req, res) => {
    res.type('application/javascript').send(INITIALIZER);
  });
  route(router, REFERENCE_ROUTES.docs, (req, res, _input, next) => {
    if (!req.originalUrl.split('?')[0]!.endsWith('/')) return res.redirect(301, '/docs/');
    next();
  });
  router.use('/docs', express.static(swaggerUiDir(), { index: 'index.html' }));
  route(router, REFERENCE_ROUTES.playground, (_req, res) => {
    res.type('text/html').send(PLAYGROUND_HTML);
  });
  route(router, REFERENCE_ROUTES.playgroundRuns, (_req, res) => {
    res.type('text/html').send(RUNS_HTML);
  });
  return router;
}

function swaggerUiDir(): string {
  return path.dirname(require.resolve('swagger-ui-dist/package.json'));
}
