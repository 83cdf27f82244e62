/**
 * Per-token billing: what a call costs and who pays it.
 *
 * Prices are USD per 1M tokens, so one token at price P costs P micro-dollars; costs are computed exactly in
 * integer pico-dollars (BigInt) and rounded UP to whole micro-dollars, then raised to the minimum of $0.001 per
 * call. A price of `null` (unknown) counts as 0 for its part, so such a call bills the minimum and says it was not
 * fully priced, rather than billing nothing silently.
 *
 * Organisations pay from their wallet: `authorize` refuses with 402 before any work when the wallet cannot pay the
 * minimum, and `charge` debits the final cost in one store transaction afterwards (a finished call is always
 * billed, so a balance can end slightly below zero when calls overlap). Guests pay nothing but count against the
 * daily playground cap.
 */
import { extend } from '../lib/extend';
import type { WalletStore } from '../stores/types';
import { insufficientCredits } from './gateway-errors';
import type { GuestIdentity, GuestSpendGuard } from './guest-spend';
import type { ModelPricing } from './model.types';

/** The spec's minimum bill: $0.001 per call. */
export const MINIMUM_CHARGE_MICROS = 1000;

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
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
  const picos =
    tokens(usage.promptTokens) * perToken(pricing.prompt) +
    tokens(usage.completionTokens) * perToken(pricing.completion);
  const standardMicros = Number(ceilDiv(picos, 1_000_000n));
  const scaled = Number(ceilDiv(picos * BigInt(Math.round(multiplier * 1000)), 1_000_000_000n));
  const priced =
    (pricing.prompt !== null || usage.promptTokens === 0) &&
    (pricing.completion !== null || usage.completionTokens === 0);
  return {
    standardMicros,
    costMicros: Math.max(scaled, minimum),
    multiplier,
    priced,
    minimumApplied: scaled < minimum,
  };
}

/** Who pays for a call. */
export type Payer = { kind: 'org'; orgId: string } | ({ kind: 'guest' } & GuestIdentity);

export interface ChargeInput {
  pricing: ModelPricing;
  usage: TokenUsage;
  multiplier?: number;
  /** Ledger text, e.g. `chat.completions prism-1 req_123`. */
  reason: string;
}

export interface ChargeResult extends CallCost {
  /** The wallet balance after the debit; null for guests. */
  balanceMicros: number | null;
}

export interface Biller {
  /** Before any work. @throws 402 `insufficient_credits` (wallet below the minimum) or `guest_spend_cap`. */
  authorize(payer: Payer): Promise<void>;
  /** After the work: price the usage and debit it (or count it against the guest cap). */
  charge(payer: Payer, input: ChargeInput): Promise<ChargeResult>;
}

export interface BillerDeps {
  wallets: WalletStore;
  guestSpend: GuestSpendGuard;
  minimumMicros?: number;
  now?: () => number;
}

export function createBiller(deps: BillerDeps): Biller {
  const minimum = deps.minimumMicros ?? MINIMUM_CHARGE_MICROS;
  const now = deps.now ?? Date.now;
  return {
    async authorize(payer) {
      if (payer.kind === 'guest') return deps.guestSpend.check(payer, now());
      if ((await deps.wallets.balance(payer.orgId)) < minimum) throw insufficientCredits();
    },
    async charge(payer, input) {
      const options =
        input.multiplier === undefined
          ? { minimumMicros: minimum }
          : { minimumMicros: minimum, multiplier: input.multiplier };
      const cost = priceCall(input.pricing, input.usage, options);
      if (payer.kind === 'guest') {
        await deps.guestSpend.record(payer, cost.costMicros, now());
        return extend(cost, { balanceMicros: null });
      }
      const balanceMicros = await deps.wallets.credit(payer.orgId, -cost.costMicros, input.reason);
      return extend(cost, { balanceMicros });
    },
  };
}

/** Micro-dollars as the dollars the usage record shows (`cost_dollars` etc.). */
export function microsToDollars(micros: number): number {
  return micros / 1e6;
}

function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}
