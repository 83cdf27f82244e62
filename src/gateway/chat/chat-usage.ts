/**
 * What every chat path shares about money and usage: the reasoning budgets of chat rule 4, the completion budget
 * assumed when a call sets none, the usage object of a reply (tokens, cost, credits), the completion id, and the
 * settlement of a call's hold at the model's prices.
 */
import { randomHex } from '../../lib/random-id';
import { microsToDollars, type ChargeResult, type Hold } from '../../metering/billing';
import type { CatalogueModel } from '../catalogue/model.types';
import type { Json } from './chat.types';

/** Completion tokens a call is assumed able to spend when it sets no `max_tokens`/`max_completion_tokens`. */
export const DEFAULT_COMPLETION_BUDGET = 4096;
/** Chat rule 4: `none`, `minimal` and `low` spend 0, 32 and 64 reasoning tokens before the answer. */
export const REASONING_TOKENS: Readonly<Record<string, number>> = { none: 0, minimal: 32, low: 64 };

export const completionId = (): string => `chatcmpl-${randomHex(12)}`;

export function usageBody(
  promptTokens: number,
  completionTokens: number,
  charge: ChargeResult | null,
  reasoning = 0,
): Json {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    completion_tokens_details: { reasoning_tokens: reasoning },
    ...(charge ? { cost: microsToDollars(charge.costMicros), credits_used: microsToDollars(charge.costMicros) } : {}),
  };
}

/** Settles a call's hold: the tokens it used at the model's prices. */
export async function charge(hold: Hold, model: CatalogueModel, prompt: number, completion: number, requestId: string) {
  return hold.settle({
    pricing: model.pricing,
    usage: { promptTokens: prompt, completionTokens: completion },
    reason: `chat.completions ${model.id} ${requestId}`,
  });
}
