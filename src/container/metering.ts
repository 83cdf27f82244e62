/**
 * The metering part of the composition root: rate limits, the guest spend cap and billing, on this replica's
 * in-memory stores (src/metering/memory-stores.ts). A shared store (Redis, PostgreSQL) for several replicas is chosen
 * here. Built before the agent runtime, the gateway and the predictions service, which all bill through it.
 *
 * Nothing here holds a resource of its own (limits and holds are in memory), so it has no closers yet.
 */
import type { Config } from '../config/config';
import type { CloseStep } from '../lib/close-all';
import { createBiller, type Biller } from '../metering/billing';
import { createGuestSpendGuard } from '../metering/guest-spend';
import { createMemoryGuestSpendStore, createMemoryRateLimitStore } from '../metering/memory-stores';
import type { RateLimitStore, RateWindow } from '../metering/ports';
import { createRateLimiter, type RateLimiter } from '../metering/rate-limiter';
import { createRequestQueue, type RequestQueue } from '../metering/request-queue';
import type { WalletStore } from '../stores/types';

export interface MeteringPart {
  /** The gateway's per-caller budget (chat, embeddings, the compat routes, MCP). */
  limiter: RateLimiter;
  /** Where the gateway's budget counts; MCP tool-call budgets (by tier) count there too. */
  rateLimitStore: RateLimitStore;
  /** The gateway's biller (chat and agent executions, priced extraction). */
  biller: Biller;
  /** The admission gate of chat calls on this replica. */
  queue: RequestQueue;
  /** Decisions meter apart: their own per-caller budget and their own (smaller) minimum charge. */
  decisions: { limiter: RateLimiter; biller: Biller };
  closers: CloseStep[];
}

export function createMeteringPart(config: Config, wallets: WalletStore): MeteringPart {
  const windows = (perMinute: number, perHour: number): RateWindow[] => [
    { name: 'minute', lengthS: 60, limit: perMinute },
    { name: 'hour', lengthS: 3600, limit: perHour },
  ];
  // The default budget, and the tiers with budgets of their own (PRISM_RATE_LIMIT_TIERS).
  const rateLimitStore = createMemoryRateLimitStore();
  const limiter = createRateLimiter(
    rateLimitStore,
    windows(config.gateway.perMinute, config.gateway.perHour),
    Object.fromEntries(
      Object.entries(config.gateway.tierLimits).map(([tier, l]) => [tier, windows(l.perMinute, l.perHour)]),
    ),
  );
  // One guest cap across chat and decisions; decisions bill their own (smaller) minimum per decision.
  const guestSpend = createGuestSpendGuard(createMemoryGuestSpendStore(), {
    capMicros: config.gateway.guestDailyCapMicros,
  });
  const biller = createBiller({
    wallets,
    guestSpend,
    minimumMicros: config.gateway.minimumChargeMicros,
  });
  const queue = createRequestQueue({
    maxInFlight: { upstream: config.gateway.maxInFlight, local: config.gateway.localInFlight },
    maxWaiting: config.gateway.maxQueue,
  });
  const decisions = {
    biller: createBiller({
      wallets,
      guestSpend,
      minimumMicros: config.decisions.minimumChargeMicros,
    }),
    limiter: createRateLimiter(createMemoryRateLimitStore(), [
      { name: 'minute', lengthS: 60, limit: config.decisions.perMinute },
      { name: 'hour', lengthS: 3600, limit: config.decisions.perHour },
    ]),
  };
  return { limiter, rateLimitStore, biller, queue, decisions, closers: [] };
}
