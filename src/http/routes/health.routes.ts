/**
 * Health: `/v1/health` (clients call it to check their key) and the open gateway `/health`.
 */
import { Router } from 'express';

export const SPEC_VERSION = '2026-05-19.0';

export function healthRoutes(version: string): Router {
  const router = Router();
  router.get('/health', (_req, res) => {
    res.json({ status: 'ok', version, spec_version: SPEC_VERSION });
  });
  return router;
}
