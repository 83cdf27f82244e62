/**
 * The metering part of the composition root: rate limits, the guest spend cap and billing. Their stores come from
 * the backend's shared state (src/backend): this replica's memory by default, or Redis shared by the replicas with
 * `PRISM_REDIS_URL` (the backend opens and closes it). Built before the agent runtime, the gateway and the
 * predictions service, which all bill through it.
 *
 * Every debit is reported to the debit observer (the container's metrics) under the kind of work that made it:
 * `biller` counts as the gateway's, `billerFor` gives the same biller under another kind, decisions count apart.
 *
 * Nothing here holds a resource of its own (the backend owns the shared state), so it has no closers yet.
 */
import type { SharedState } from '../backend/types';
import type { Config } from '../config/config';
import type { CloseStep } from '../lib/close-all';
import { createBiller, type Biller } from '../metering/billing';
import { observeDebits, type BillingKind, type DebitObserver } from '../metering/debit-observer';
import { createGuestSpendGuard } from '../metering/guest-spend';
import type { RateLimitStore, RateWindow } from '../metering/ports';
import { createRateLimiter, type RateLimiter } from '../metering/rate-limiter';
import { createRequestQueue, type RequestQueue } from '../metering/request-queue';
import type { WalletStore } from '../stores/types';

export interface MeteringPart {
  /** The gateway's per-caller budget (chat, embeddings, the compat routes, MCP). */
  limiter: RateLimiter;
  /** Where the gateway's budget counts; MCP tool-call budgets (by tier) count there too. */
  rateLimitStore: RateLimitStore;
  /** The gateway's biller (chat completions, agent chat turns, embeddings); its debits count as `gateway`. */
  biller: Biller;
  /** The same biller (same wallets, holds and guest lane), its debits counted under `kind` (agents, extraction). */
  billerFor(kind: BillingKind): Biller;
  /** The admission gate of chat calls on this replica. */
  queue: RequestQueue;
  /** Decisions meter apart: their own per-caller budget and their own (smaller) minimum charge. */
  decisions: { limiter: RateLimiter; biller: Biller };
  closers: CloseStep[];
}

export function createMeteringPart(
  config: Config,
  wallets: WalletStore,
  shared: SharedState,
  onDebit: DebitObserver = () => undefined,
): MeteringPart {
  const windows = (perMinute: number, perHour: number): RateWindow[] => [
    { name: 'minute', lengthS: 60, limit: perMinute },
    { name: 'hour', lengthS: 3600, limit: perHour },
  ];
  // The default budget, and the tiers with budgets of their own (PRISM_RATE_LIMIT_TIERS).
  const rateLimitStore = shared.rateLimitStore('gateway');
  const limiter = createRateLimiter(
    rateLimitStore,
    windows(config.gateway.perMinute, config.gateway.perHour),
    Object.fromEntries(
      Object.entries(config.gateway.tierLimits).map(([tier, l]) => [tier, windows(l.perMinute, l.perHour)]),
    ),
  );
  // One guest cap across chat and decisions; decisions bill their own (smaller) minimum per decision.
  // Both billers share the guests' holds and lane: a guest's chat calls and decisions reserve one at a time, on
  // every replica when the state is in Redis.
  const guestSpend = createGuestSpendGuard(shared.guestSpendStore(), {
    capMicros: config.gateway.guestDailyCapMicros,
    holds: shared.guestHolds,
  });
  const biller = createBiller({
    wallets,
    guestSpend,
    minimumMicros: config.gateway.minimumChargeMicros,
    lock: shared.payerLock,
  });
  const queue = createRequestQueue({
    maxInFlight: { upstream: config.gateway.maxInFlight, local: config.gateway.localInFlight },
    maxWaiting: config.gateway.maxQueue,
  });
  const decisions = {
    biller: observeDebits(
      createBiller({
        wallets,
        guestSpend,
        minimumMicros: config.decisions.minimumChargeMicros,
        lock: shared.payerLock,
      }),
      'decisions',
      onDebit,
    ),
    limiter: createRateLimiter(shared.rateLimitStore('decisions'), [
      { name: 'minute', lengthS: 60, limit: config.decisions.perMinute },
      { name: 'hour', lengthS: 3600, limit: config.decisions.perHour },
    ]),
  };
  return {
    limiter,
    rateLimitStore,
    biller: observeDebits(biller, 'gateway', onDebit),
    billerFor: (kind) => observeDebits(biller, kind, onDebit),
    queue,
    decisions,
    closers: [],
  };
}
