/**
 * Hub routes (open, no key needed). The domain catalogue arrives with the extraction work; the version is here
 * from the start because clients read it first.
 */
import { Router } from 'express';
import { SPEC_VERSION } from './health.routes';

export function hubRoutes(): Router {
  const router = Router();
  router.get('/info', (_req, res) => {
    res.json({ version: SPEC_VERSION });
  });
  return router;
}
