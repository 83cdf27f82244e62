/**
 * Health: `/v1/health` (clients call it to check their key) and the open gateway `/health`.
 */
import { Router } from 'express';
import { INTERFACE_VERSION } from '../../domain/version';
import { declare, route } from '../api/route-declaration';
import { healthSchema } from '../api/response-schemas';

export const HEALTH = declare({
  method: 'get',
  path: '/health',
  tag: 'Health',
  summary: 'Health (and a check of your key, when one is sent)',
  auth: 'open',
  responses: {
    200: {
      description: 'The service answers',
      schema: healthSchema,
      example: { status: 'ok', version: '0.1.0', spec_version: '2026-05-19.0' },
    },
  },
});

export function healthRoutes(version: string): Router {
  const router = Router();
  route(router, HEALTH, (_req, res) => {
    res.json({ status: 'ok', version, spec_version: INTERFACE_VERSION });
  });
  return router;
}
