/**
 * Per-token billing: what a call costs and who pays it.
 *
 * Prices are USD per 1M tokens, so one token at price P costs P micro-dollars; costs are computed exactly in
 * integer pico-dollars (BigInt) and rounded UP to whole micro-dollars, then raised to the minimum of $0.001 per
 * call. A price of `null` (unknown) counts as 0 for its part, so such a call bills the minimum and says it was not
 * fully priced, rather than billing nothing silently.
 *
 * Organisations pay from their wallet. Before any work, `reserve` holds the largest cost the call can have (its
 * prompt and its whole completion budget at the model's prices, at least the minimum) against the balance less what
 * other calls already hold, refusing with 402 when it does not fit; after the work the hold is settled (the real
 * cost debited, the hold given back) or, when the call failed, released. An organisation's holds live in its wallet
 * store, which takes each one atomically, so fifty concurrent calls at a wallet that covers ten get exactly ten holds
 * and the balance never goes below zero, on one process or many. Guests pay nothing but hold and count against the
 * daily playground cap the same way. A hold that is never settled (a stream nobody read) lapses on its own after
 * `holdTtlMs`.
 */
import { extend } from '../lib/extend';
import { createKeyedMutex } from '../lib/keyed-mutex';
import type { WalletStore } from '../stores/types';
import type { GuestIdentity, GuestSpendGuard } from './guest-spend';
import { InsufficientCreditsError } from './metering-errors';
import type { PayerLock } from './ports';

/** USD per 1M tokens; null = unknown (never the same as free). */
export interface ModelPricing {
  prompt: number | null;
  completion: number | null;
  /** USD per minute of audio (transcription models; billed per started second); null = unknown. */
  perMinute?: number | null;
}

/** The spec's minimum bill: $0.001 per call. */
export const MINIMUM_CHARGE_MICROS = 1000;

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  /** Whole seconds of audio, priced at `perMinute` (transcriptions). */
  audioSeconds?: number;
}

export interface CallCost {
  /** Before the service-tier multiplier and the minimum. */
  standardMicros: number;
  /** What is billed: after the multiplier, at least the minimum. */
  costMicros: number;
  multiplier: number;
  /** False when a price the usage needed is unknown (null). */
  priced: boolean;
  minimumApplied: boolean;
}

/** Price one call. @param multiplier service-tier multiplier (flex < 1, priority > 1), to 3 decimals. */
export function priceCall(
  pricing: ModelPricing,
  usage: TokenUsage,
  options: { multiplier?: number; minimumMicros?: number } = {},
): CallCost {
  const multiplier = options.multiplier ?? 1;
  const minimum = options.minimumMicros ?? MINIMUM_CHARGE_MICROS;
  const tokens = (n: number): bigint => BigInt(Math.max(0, Math.round(n)));
  const perToken = (usd: number | null): bigint => BigInt(Math.round((usd ?? 0) * 1e6));
  const audioSeconds = usage.audioSeconds ?? 0;
  // A second of audio at P dollars a minute is P/60 dollars: P×1e6 micro-dollars a minute ×1e6 picos, over 60.
  const audioPicos = ceilDiv(tokens(audioSeconds) * perToken(pricing.perMinute ?? null) * 1_000_000n, 60n);
  const picos =
    tokens(usage.promptTokens) * perToken(pricing.prompt) +
    tokens(usage.completionTokens) * perToken(pricing.completion) +
    audioPicos;
  const standardMicros = Number(ceilDiv(picos, 1_000_000n));
  // The multiplier scales the standard cost as reported, so cost = standard × multiplier holds to the micro-dollar.
  const scaled = Number(ceilDiv(BigInt(standardMicros) * BigInt(Math.round(multiplier * 1000)), 1000n));
  const priced =
    (pricing.prompt !== null || usage.promptTokens === 0) &&
    (pricing.completion !== null || usage.completionTokens === 0) &&
    (pricing.perMinute != null || audioSeconds === 0);
  return {
    standardMicros,
    costMicros: Math.max(scaled, minimum),
    multiplier,
    priced,
    minimumApplied: scaled < minimum,
  };
}

/** Who pays for a call; `keyId` names the API key that made it (its own budget, src/services/admin). */
export type Payer = { kind: 'org'; orgId: string; keyId?: string | null } | ({ kind: 'guest' } & GuestIdentity);

export interface ChargeInput {
  pricing: ModelPricing;
  usage: TokenUsage;
  multiplier?: number;
  /** Ledger text, e.g. `chat.completions prism-1 req_123`. */
  reason: string;
  /** The most this charge may debit (an agent run's hold is its ceiling); the priced cost is cut to it. */
  capMicros?: number;
  /** The least it debits, instead of the biller's (chat completions' $0.001); agent executions have none (0). */
  minimumMicros?: number;
}

export interface ChargeResult extends CallCost {
  /** The wallet balance after the debit; null for guests. */
  balanceMicros: number | null;
}

/** Money held for one call between `reserve` and its settlement. */
export interface Hold {
  readonly micros: number;
  /** Debits (or counts) the real cost, then gives the hold back. Call once. */
  settle(input: ChargeInput): Promise<ChargeResult>;
  /** Gives the hold back without charging (the call failed). Idempotent; a no-op after `settle`. */
  release(): void;
}

export interface Biller {
  /** Before any work. @throws 402 `insufficient_credits` (wallet below the minimum) or `guest_spend_cap`. */
  authorize(payer: Payer): Promise<void>;
  /**
   * Before any work: hold `maxMicros` (raised to the minimum) for the call.
   * @throws 402 `insufficient_credits` when the balance less other holds cannot cover it, or `guest_spend_cap`.
   */
  reserve(payer: Payer, maxMicros: number): Promise<Hold>;
  /** After the work: price the usage and debit it (or count it against the guest cap). */
  charge(payer: Payer, input: ChargeInput): Promise<ChargeResult>;
  /** What `charge` (or a hold's settlement) debits for `input`, without debiting: for a record written first. */
  price(input: ChargeInput): CallCost;
}

export interface BillerDeps {
  wallets: WalletStore;
  guestSpend: GuestSpendGuard;
  minimumMicros?: number;
  now?: () => number;
  /** How long an unsettled hold lives before it lapses (default 15 minutes). */
  holdTtlMs?: number;
  /**
   * Guests' reservations and settlements run one at a time under this lock (default: this replica's keyed mutex;
   * a shared guest spend store needs a lock shared as widely). Organisations need none: their wallet store takes
   * each hold atomically.
   */
  lock?: PayerLock;
}

/**
 * The most a chat call can cost: its prompt and its whole completion budget at the model's prices, with the
 * service-tier multiplier and the minimum applied.
 */
export function maxCallMicros(
  pricing: ModelPricing,
  promptTokens: number,
  maxCompletionTokens: number,
  options: { multiplier?: number; minimumMicros?: number } = {},
): number {
  return priceCall(pricing, { promptTokens, completionTokens: maxCompletionTokens }, options).costMicros;
}

export function createBiller(deps: BillerDeps): Biller {
  const minimum = deps.minimumMicros ?? MINIMUM_CHARGE_MICROS;
  const now = deps.now ?? Date.now;
  const holdTtlMs = deps.holdTtlMs ?? 15 * 60_000;
  /** Guests' holds and settlements run one at a time (they share one lane: they are few and cheap). */
  const guestLane = deps.lock ?? createKeyedMutex();

  const price = (input: ChargeInput): CallCost => {
    const floor = input.minimumMicros ?? minimum;
    const options =
      input.multiplier === undefined
        ? { minimumMicros: floor }
        : { minimumMicros: floor, multiplier: input.multiplier };
    const priced = priceCall(input.pricing, input.usage, options);
    // A capped charge reports the cap before the multiplier as its standard cost (cost = standard × multiplier).
    return input.capMicros !== undefined && priced.costMicros > input.capMicros
      ? { ...priced, costMicros: input.capMicros, standardMicros: Math.floor(input.capMicros / priced.multiplier) }
      : priced;
  };

  const charge = async (payer: Payer, input: ChargeInput): Promise<ChargeResult> => {
    const cost = price(input);
    if (payer.kind === 'guest') {
      await deps.guestSpend.record(payer, cost.costMicros, now());
      return extend(cost, { balanceMicros: null });
    }
    const balanceMicros = await deps.wallets.credit(payer.orgId, -cost.costMicros, input.reason);
    return extend(cost, { balanceMicros });
  };

  /** A guest's hold: counted against the daily cap by the guest spend guard, under the guests' lane. */
  const guestHold = async (payer: Payer & { kind: 'guest' }, micros: number): Promise<Hold> => {
    await guestLane.run('guests', () => deps.guestSpend.hold(payer, micros, now()));
    let open = true;
    const lapse = setTimeout(() => release(), holdTtlMs);
    lapse.unref();
    function release(): void {
      if (!open) return;
      open = false;
      clearTimeout(lapse);
      deps.guestSpend.release(payer, micros);
    }
    return {
      micros,
      release,
      settle(input) {
        if (!open) return charge(payer, input);
        return guestLane.run('guests', async () => {
          try {
            return await charge(payer, input);
          } finally {
            release();
          }
        });
      },
    };
  };

  /**
   * An organisation's hold lives in the wallet store: taking it is one atomic step there (on PostgreSQL one
   * conditional UPDATE), so replicas and processes never hand out the same money twice; the store lapses it after
   * `holdTtlMs` should this process die before settling.
   */
  const walletHold = async (orgId: string, micros: number): Promise<Hold> => {
    const id = await deps.wallets.hold(orgId, micros, holdTtlMs);
    if (id === null) throw new InsufficientCreditsError();
    let open = true;
    return {
      micros,
      release() {
        if (!open) return;
        open = false;
        // Fire and forget: a release that fails leaves the hold to lapse in the store.
        deps.wallets.release(id).catch(() => undefined);
      },
      async settle(input) {
        if (!open) return charge({ kind: 'org', orgId }, input);
        open = false;
        const cost = price(input);
        const balanceMicros = await deps.wallets.settle(id, orgId, cost.costMicros, input.reason);
        return extend(cost, { balanceMicros });
      },
    };
  };

  return {
    async authorize(payer) {
      if (payer.kind === 'guest') return deps.guestSpend.check(payer, now());
      if ((await deps.wallets.balance(payer.orgId)) < minimum) throw new InsufficientCreditsError();
    },
    async reserve(payer, maxMicros) {
      const micros = Math.max(minimum, Math.ceil(maxMicros));
      return payer.kind === 'guest' ? guestHold(payer, micros) : walletHold(payer.orgId, micros);
    },
    charge,
    price,
  };
}

/** Micro-dollars as the dollars the usage record shows (`cost_dollars` etc.). */
export function microsToDollars(micros: number): number {
  return micros / 1e6;
}

function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}
