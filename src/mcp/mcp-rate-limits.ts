/**
 * Rate limits of MCP tool calls: a budget per caller and per minute that follows the caller's tier
 * (PRISM_MCP_CALLS_PER_MINUTE, e.g. `anonymous=60,free=60,pro=600,enterprise=6000`; 0 is no limit), apart from the
 * gateway's chat budget, so an agent loop on a Pro key is not held to the anonymous rate. In single-user mode the
 * owner's calls are not counted (PRISM_MCP_OWNER_UNLIMITED, on by default): the owner runs this Prism. Counts live
 * in the gateway's rate-limit store, so they are shared wherever that store is.
 */
import type { Principal, Tier } from '../domain/account';
import { callerKey } from '../metering/caller-key';
import type { RateLimitStore } from '../metering/ports';
import { createRateLimiter, type RateLimitDecision, type RateLimiter } from '../metering/rate-limiter';

export interface ToolCallLimiter {
  /** Counts one call; null when the caller has no limit. */
  check(principal: Principal): Promise<RateLimitDecision | null>;
}

export interface ToolCallLimitSettings {
  perMinute: Record<'anonymous' | Tier, number>;
  ownerUnlimited: boolean;
}

export function createToolCallLimiter(
  store: RateLimitStore,
  settings: ToolCallLimitSettings,
  /** The owner organisation in single-user mode; null otherwise. */
  ownerOrgId: () => Promise<string | null>,
): ToolCallLimiter {
  const limiters = new Map<string, RateLimiter>();
  for (const [tier, limit] of Object.entries(settings.perMinute)) {
    if (limit > 0) limiters.set(tier, createRateLimiter(store, [{ name: 'minute', lengthS: 60, limit }]));
  }
  return {
    async check(principal) {
      if (principal.kind === 'user' && settings.ownerUnlimited && principal.orgId === (await ownerOrgId())) {
        return null;
      }
      const limiter = limiters.get(principal.kind === 'user' ? principal.tier : 'anonymous');
      return limiter ? limiter.check(`mcp:${callerKey(principal)}`) : null;
    },
  };
}
