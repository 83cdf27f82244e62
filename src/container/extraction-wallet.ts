/**
 * Binds the predictions service's ExtractionWallet to the gateway's biller: a credit (page, image, started minute)
 * is priced at PRISM_EXTRACTION_USD_PER_PAGE, held through `biller.reserve` (so the gateway's 402
 * `insufficient_credits`, its per-organisation lane and its minimum charge apply unchanged) and settled through the
 * hold. A settlement never debits more credits than were held, so concurrent extractions cannot overdraw the
 * wallet even when an input reads longer than it was measured.
 */
import type { Biller } from '../metering/billing';
import type { ExtractionWallet } from '../services/predictions/extraction-billing';

export function createExtractionWallet(biller: Biller, microsPerCredit: number): ExtractionWallet | null {
  if (!(microsPerCredit > 0)) return null;
  // Prices are micro-dollars per token to the biller; one credit is billed as one prompt token at this price.
  const pricing = { prompt: microsPerCredit, completion: 0 };
  const usage = (credits: number) => ({ promptTokens: Math.max(0, Math.round(credits)), completionTokens: 0 });
  return {
    async reserve(orgId, maxCredits) {
      // Rounded to the pico-dollar first, so 0.002 × 1e6 held for one page is 2000 micro-dollars, not 2001.
      const micros = Math.ceil(Number((maxCredits * microsPerCredit).toFixed(6)));
      const hold = await biller.reserve({ kind: 'org', orgId }, micros);
      return {
        async settle(credits, reason) {
          await hold.settle({ pricing, usage: usage(Math.min(credits, maxCredits)), reason });
        },
        release: () => hold.release(),
      };
    },
    async charge(orgId, credits, reason) {
      await biller.charge({ kind: 'org', orgId }, { pricing, usage: usage(credits), reason });
    },
  };
}
