/**
 * The gateway's per-caller rate limit as middleware: one budget per user (or client IP for anonymous callers)
 * shared by chat, embeddings and the public compat routes. Headers go on every answer; a 429 says which window
 * ran out and when to come back.
 */
import type { RequestHandler } from 'express';
import type { Principal } from '../../domain/account';
import { callerKey } from '../../gateway/caller-key';
import { RateLimitExceededError } from '../../gateway/gateway-errors';
import { rateLimitHeaders, type RateLimiter } from '../../gateway/rate-limiter';
import { principalOf } from '../request-context';

/** Count one call of `principal`, put the x-ratelimit headers on `res`, and throw the 429 when over a limit. */
export async function enforceRateLimit(
  limiter: RateLimiter,
  principal: Principal,
  res: { setHeader(name: string, value: string): unknown },
): Promise<void> {
  const decision = await limiter.check(
    callerKey(principal),
    undefined,
    principal.kind === 'user' ? principal.tier : 'anonymous',
  );
  for (const [name, value] of Object.entries(rateLimitHeaders(decision))) res.setHeader(name, value);
  if (!decision.allowed) {
    throw new RateLimitExceededError({
      window: decision.label,
      retryAfterS: decision.retryAfterS,
      tier: principal.kind === 'user' ? principal.tier : 'anonymous',
      anonymous: principal.kind === 'anonymous',
    });
  }
}

export function rateLimit(limiter: RateLimiter): RequestHandler {
  return async (req, res, next) => {
    await enforceRateLimit(limiter, principalOf(req), res);
    next();
  };
}
