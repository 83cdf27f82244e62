/**
 * The pages a person opens: the API reference (`/openapi.json`, built once from the routes' zod schemas, and
 * `/docs`, Swagger UI served from the swagger-ui-dist package, so it works with no network) and `/playground`.
 */
import path from 'node:path';
import express, { Router } from 'express';
import { buildOpenApiDocument } from '../openapi/openapi-document';
import { PLAYGROUND_HTML } from '../../playground/playground-page';
import { RUNS_HTML } from '../../playground/runs-page';

const INITIALIZER = `window.onload = () => {
  window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout' });
};
`;

export function referenceRoutes(version: string): Router {
  const router = Router();
  let document: string | undefined;
  router.get('/openapi.json', (_req, res) => {
    document ??= JSON.stringify(buildOpenApiDocument(version));
    res.type('application/json').send(document);
  });
  router.get('/docs/swagger-initializer.js', (_req, res) => {
    res.type('application/javascript').send(INITIALIZER);
  });
  router.get('/docs', (req, res, next) => {
    if (!req.originalUrl.split('?')[0]!.endsWith('/')) return res.redirect(301, '/docs/');
    next();
  });
  router.use('/docs', express.static(swaggerUiDir(), { index: 'index.html' }));
  router.get('/playground', (_req, res) => {
    res.type('text/html').send(PLAYGROUND_HTML);
  });
  router.get('/playground/runs', (_req, res) => {
    res.type('text/html').send(RUNS_HTML);
  });
  return router;
}

function swaggerUiDir(): string {
  return path.dirname(require.resolve('swagger-ui-dist/package.json'));
}
