/**
 * The per-caller rate limit as one call every adapter makes before metered work: count the call against the
 * caller's budget (user account, or client address for anonymous callers), put the `x-ratelimit-*` headers on the
 * answer, and throw the 429 that says which window ran out and when to come back. The HTTP middleware, the gateway
 * fast lane, the MCP tools and the WebSocket upgrade all call it, so none of them imports another.
 */
import type { Principal } from '../domain/account';
import { callerKey } from './caller-key';
import { RateLimitExceededError } from './metering-errors';
import { rateLimitHeaders, type RateLimiter } from './rate-limiter';

/** Count one call of `principal`, put the x-ratelimit headers on `res`, and throw the 429 when over a limit. */
export async function enforceRateLimit(
  limiter: RateLimiter,
  principal: Principal,
  res: { setHeader(name: string, value: string): unknown },
): Promise<void> {
  const tier = principal.kind === 'user' ? principal.tier : 'anonymous';
  const decision = await limiter.check(callerKey(principal), undefined, tier);
  for (const [name, value] of Object.entries(rateLimitHeaders(decision))) res.setHeader(name, value);
  if (!decision.allowed) {
    throw new RateLimitExceededError({
      window: decision.label,
      retryAfterS: decision.retryAfterS,
      tier,
      anonymous: principal.kind === 'anonymous',
    });
  }
}
