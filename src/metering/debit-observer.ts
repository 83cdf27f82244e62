/**
 * Who is told about each debit, and under which kind of work, so operators can see money move (`GET /metrics`:
 * debits and dollars by kind). One biller serves the gateway, agent runs and priced extraction; each of them gets
 * it wrapped here with its own kind, so the biller itself stays unaware of metrics and of its callers.
 *
 * A debit is a settled charge of more than zero: an organisation's wallet debit, or a guest's spend counted against
 * the daily cap (`payer` says which). A hold given back, and a run that cost nothing, are not debits.
 */
import type { Biller, ChargeResult, Payer } from './billing';

/** The surface that billed: chat and embeddings, decision frames, extraction credits, agent executions. */
export type BillingKind = 'gateway' | 'decisions' | 'extraction' | 'agents';

export type DebitObserver = (kind: BillingKind, payer: Payer['kind'], micros: number) => void;

/** `biller`, with every debit it settles reported to `observe` under `kind`. */
export function observeDebits(biller: Biller, kind: BillingKind, observe: DebitObserver): Biller {
  const seen = (payer: Payer, result: ChargeResult): ChargeResult => {
    if (result.costMicros > 0) observe(kind, payer.kind, result.costMicros);
    return result;
  };
  return {
    authorize: (payer) => biller.authorize(payer),
    async reserve(payer, maxMicros) {
      const hold = await biller.reserve(payer, maxMicros);
      return {
        micros: hold.micros,
        release: () => hold.release(),
        settle: async (input) => seen(payer, await hold.settle(input)),
      };
    },
    charge: async (payer, input) => seen(payer, await biller.charge(payer, input)),
    price: (input) => biller.price(input),
  };
}
