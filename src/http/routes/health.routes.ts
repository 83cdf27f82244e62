/**
 * Health: `/v1/health` (clients call it to check their key) and the open gateway `/health`.
 */
import { Router } from 'express';
import { INTERFACE_VERSION } from '../../domain/version';

export function healthRoutes(version: string): Router {
  const router = Router();
  router.get('/health', (_req, res) => {
    res.json({ status: 'ok', version, spec_version: INTERFACE_VERSION });
  });
  return router;
}
