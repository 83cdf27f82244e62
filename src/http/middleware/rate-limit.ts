/**
 * The gateway's per-caller rate limit as middleware: one budget per user (or client IP for anonymous callers)
 * shared by chat, embeddings and the public compat routes. Headers go on every answer; a 429 says which window
 * ran out and when to come back (src/metering/enforce-rate-limit.ts, shared with the other adapters).
 */
import type { RequestHandler } from 'express';
import { enforceRateLimit } from '../../metering/enforce-rate-limit';
import type { RateLimiter } from '../../metering/rate-limiter';
import { principalOf } from '../request-context';

export function rateLimit(limiter: RateLimiter): RequestHandler {
  return async (req, res, next) => {
    await enforceRateLimit(limiter, principalOf(req), res);
    next();
  };
}
