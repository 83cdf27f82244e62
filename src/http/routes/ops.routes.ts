/**
 * Routes for operators, open and outside `/v1`: `/health` (the process answers), `/ready` (it can serve: storage
 * answers and the model catalogue is loaded; 503 otherwise, so a load balancer stops sending traffic) and
 * `/metrics` (Prometheus text format).
 */
import { Router } from 'express';
import { INTERFACE_VERSION } from '../../domain/version';

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
  router.get('/health', (_req, res) => {
    res.json({ status: 'ok', version: deps.version, spec_version: INTERFACE_VERSION });
  });
  router.get('/ready', async (_req, res) => {
    const storage = await withTimeout(deps.probeStorage(), deps.probeTimeoutMs ?? 2000).then(
      () => 'ok' as const,
      () => 'unreachable' as const,
    );
    const models = deps.modelCount() > 0 ? ('ok' as const) : ('none loaded' as const);
    const ready = storage === 'ok' && models === 'ok';
    if (!ready) res.setHeader('retry-after', '5');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks: { storage, models } });
  });
  router.get('/metrics', async (_req, res) => {
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
