/**
 * Routes for operators, open and outside `/v1`: `/health` (the process answers), `/ready` (it can serve: storage
 * answers and the model catalogue is loaded; 503 otherwise, so a load balancer stops sending traffic) and
 * `/metrics` (Prometheus text format).
 */
import { Router } from 'express';
import { INTERFACE_VERSION } from '../../domain/version';
import { declare, route } from '../api/route-declaration';
import { healthSchema, readySchema } from '../api/response-schemas';

const tag = 'Operations';

export const OPS_ROUTES = {
  health: declare({
    method: 'get',
    path: '/health',
    tag,
    summary: 'The process answers',
    auth: 'open',
    responses: {
      200: {
        description: 'Alive',
        schema: healthSchema,
        example: { status: 'ok', version: '0.1.0', spec_version: '2026-05-19.0' },
      },
    },
  }),
  ready: declare({
    method: 'get',
    path: '/ready',
    tag,
    summary: 'Ready to serve (storage answers, models loaded); 503 otherwise',
    auth: 'open',
    responses: {
      200: {
        description: 'Ready (a 503 has the same body with `not_ready`)',
        schema: readySchema,
        example: { status: 'ready', checks: { storage: 'ok', models: 'ok' } },
      },
    },
    errors: [503],
  }),
  metrics: declare({
    method: 'get',
    path: '/metrics',
    tag,
    summary: 'Prometheus metrics',
    auth: 'open',
    responses: { 200: { description: 'Prometheus text format 0.0.4', contentType: 'text/plain' } },
  }),
};

export interface OpsRoutesDeps {
  version: string;
  /** Resolves when storage answers a query; rejects (or times out) when it does not. */
  probeStorage: () => Promise<void>;
  /** How many models the catalogue serves (0: the models are not loaded). */
  modelCount: () => number;
  metrics: { render(): Promise<string> };
  /** How long `/ready` waits for storage before calling it unreachable. */
  probeTimeoutMs?: number;
}

export function opsRoutes(deps: OpsRoutesDeps): Router {
  const router = Router();
  route(router, OPS_ROUTES.health, (_req, res) => {
    res.json({ status: 'ok', version: deps.version, spec_version: INTERFACE_VERSION });
  });
  route(router, OPS_ROUTES.ready, async (_req, res) => {
    const storage = await withTimeout(deps.probeStorage(), deps.probeTimeoutMs ?? 2000).then(
      () => 'ok' as const,
      () => 'unreachable' as const,
    );
    const models = deps.modelCount() > 0 ? ('ok' as const) : ('none loaded' as const);
    const ready = storage === 'ok' && models === 'ok';
    if (!ready) res.setHeader('retry-after', '5');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks: { storage, models } });
  });
  route(router, OPS_ROUTES.metrics, async (_req, res) => {
    const text = await deps.metrics.render();
    res.setHeader('content-type', 'text/plain; version=0.0.4; charset=utf-8');
    res.send(text);
  });
  return router;
}

function withTimeout(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
