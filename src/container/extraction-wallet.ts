/**
 * Binds the predictions service's ExtractionWallet to the gateway's biller: a credit (page, image, started minute)
 * is priced at PRISM_EXTRACTION_USD_PER_PAGE and a second of audio heard by the transcription model at its
 * `per_minute` price, held through `biller.reserve` (so the gateway's 402 `insufficient_credits`, its
 * per-organisation lane and its minimum charge apply unchanged) and settled through the hold. A settlement never
 * debits more than was held, so concurrent extractions cannot overdraw the wallet even when an input reads longer
 * than it was measured. A request that can cost nothing (free credits, no speech heard) holds nothing.
 */
import { priceCall, type Biller, type ModelPricing } from '../metering/billing';
import type { ExtractionHold, ExtractionWallet } from '../services/predictions/extraction-billing';

const FREE: ExtractionHold = { settle: async () => undefined, release: () => undefined };

export function createExtractionWallet(
  biller: Biller,
  microsPerCredit: number,
  speechPricing: ModelPricing | null,
): ExtractionWallet | null {
  const speechPriced = (speechPricing?.perMinute ?? 0) > 0;
  if (!(microsPerCredit > 0) && !speechPriced) return null;
  // Prices are micro-dollars per token to the biller: a credit is billed as one prompt token at this price, a
  // second of audio at the transcription model's per-minute price.
  const pricing: ModelPricing = { prompt: microsPerCredit, completion: 0, perMinute: speechPricing?.perMinute ?? 0 };
  const usage = (credits: number, speechSeconds: number) => ({
    promptTokens: microsPerCredit > 0 ? Math.max(0, Math.round(credits)) : 0,
    completionTokens: 0,
    audioSeconds: speechPriced ? Math.max(0, Math.round(speechSeconds)) : 0,
  });
  return {
    async reserve(orgId, maxCredits, maxSpeechSeconds = 0, keyId = null) {
      const most = usage(maxCredits, maxSpeechSeconds);
      if (most.promptTokens === 0 && most.audioSeconds === 0) return FREE;
      // Rounded to the pico-dollar first, so 0.002 × 1e6 held for one page is 2000 micro-dollars, not 2001.
      const creditMicros = Math.ceil(Number((most.promptTokens * microsPerCredit).toFixed(6)));
      const speechMicros = priceCall({ prompt: 0, completion: 0, perMinute: pricing.perMinute ?? 0 }, most, {
        minimumMicros: 0,
      }).costMicros;
      const hold = await biller.reserve({ kind: 'org', orgId, keyId }, creditMicros + speechMicros);
      return {
        async settle(credits, reason, speechSeconds = 0) {
          const used = usage(Math.min(credits, maxCredits), Math.min(speechSeconds, maxSpeechSeconds));
          if (used.promptTokens === 0 && used.audioSeconds === 0) return hold.release();
          await hold.settle({ pricing, usage: used, reason, capMicros: hold.micros });
        },
        release: () => hold.release(),
      };
    },
  };
}
