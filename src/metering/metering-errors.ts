/**
 * The errors metering throws: an exhausted caller budget, a full request queue, a wallet or guest cap that cannot
 * pay. AppError subclasses with the wire fields the spec names; every adapter renders them like any other AppError.
 * They live beside metering (not in the gateway) because the rate limiter, the queue and billing raise them for
 * every adapter and every service that meters work.
 */
import { AppError } from '../domain/errors';

/** What a 429 for an exhausted caller budget needs to say (spec Errors rule 2). */
export interface RateLimitRejection {
  /** The window that ran out, as people read it: `60 per 1 minute`. */
  window: string;
  retryAfterS: number;
  /** The caller's tier, echoed in the body. */
  tier: string;
  anonymous: boolean;
  /** For anonymous callers: where to get a key. */
  upgradeHint?: string;
}

/**
 * 429: the caller's per-minute or per-hour budget is used up. `Retry-After` is the longest exhausted window, so one
 * wait of that length is enough; anonymous callers also get a sign-up pointer and `X-Prism-Upgrade`.
 */
export class RateLimitExceededError extends AppError {
  constructor(r: RateLimitRejection) {
    const base = `Rate limit exceeded: ${r.window}`;
    const hint = r.upgradeHint ?? 'Sign up for an API key to get your own per-account budget.';
    super(429, {
      message: r.anonymous ? `${base}. ${hint}` : base,
      type: 'rate_limit_exceeded',
      code: 'rate_limit_exceeded',
      retryAfterSeconds: r.retryAfterS,
      extra: { tier: r.tier },
      suggestsApiKey: r.anonymous,
    });
  }
}

/** 429: a replica's queue is full; the same call can succeed on retry (spec Errors rule 3). */
export class QueueFullError extends AppError {
  constructor(retryAfterS = 60) {
    super(429, {
      message: `The server is at capacity; retry in ${retryAfterS} seconds`,
      type: 'rate_limit_exceeded',
      code: 'queue_full',
      retryAfterSeconds: retryAfterS,
    });
  }
}

/** 402: the organisation's wallet cannot pay for the call. */
export class InsufficientCreditsError extends AppError {
  constructor() {
    super(402, {
      message: 'Your organisation has no credit left; add credits to continue',
      type: 'billing_error',
      code: 'insufficient_credits',
    });
  }
}

/** 402: a guest used up the day's free playground spend for their IP address or browser. */
export class GuestSpendCapReachedError extends AppError {
  constructor(capMicros: number, upgradeHint: string) {
    super(402, {
      message: `Guest usage is limited to $${(capMicros / 1e6).toFixed(2)} per day. ${upgradeHint}`,
      type: 'billing_error',
      code: 'guest_spend_cap',
      suggestsApiKey: true,
    });
  }
}
