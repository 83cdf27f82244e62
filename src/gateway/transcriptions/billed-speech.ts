/**
 * The agent tools' transcriptions, billed like the gateway's own route: before the model hears a recording its
 * cost (every started second at the transcription model's `per_minute` price, the $0.001 minimum per call) is held
 * on the caller's wallet — 402 `insufficient_credits` (or `guest_spend_cap`) before any upstream call when it cannot
 * be covered — and settled when the transcript is back, released when it fails. A run asked with an API key names it
 * (execution-run.ts), so the key's budget and its organisation's are held first (`withKeyBudgets`, docs/admin.md). The transcript says what was
 * billed, so an execution's usage can show it.
 *
 * Extraction predictions do not come here: their hold covers the seconds heard with the request's credits.
 */
import type { Principal } from '../../domain/account';
import type { TimedSpeech } from '../../engines/local/speech-reader';
import { billedSeconds } from '../../engines/local/speech-reader';
import type { VisionPort } from '../../engines/vision-port';
import { microsToDollars, priceCall, type Biller } from '../../metering/billing';
import { payerOf } from '../../metering/payer';
import type { ModelCatalogue } from '../catalogue/model-catalogue';
import { configuredSpeechModel } from './speech-transcriber';

type TranscribeSpeech = VisionPort['transcribeSpeech'];

export interface BilledSpeechDeps {
  catalogue: ModelCatalogue;
  biller: Biller;
  /** The recording's duration in seconds (null: unknown). @throws 400 `invalid_media` for what is not media. */
  audioDuration: (bytes: Buffer) => Promise<number | null>;
}

/**
 * `transcribe` billed to `principal`'s wallet (a guest's daily cap for a caller without a key). Unchanged when no
 * transcription model is configured (it then fails saying so) or its price is not set.
 */
export function billedSpeechFor(
  deps: BilledSpeechDeps,
  transcribe: TranscribeSpeech,
): (principal: Principal) => TranscribeSpeech {
  const model = configuredSpeechModel(deps.catalogue);
  if (!model || !(model.pricing.perMinute && model.pricing.perMinute > 0)) return () => transcribe;
  const pricing = model.pricing;
  return (principal) => async (audio) => {
    const seconds = billedSeconds((await deps.audioDuration(audio.bytes)) ?? 0);
    const usage = { promptTokens: 0, completionTokens: 0, audioSeconds: seconds };
    const hold = await deps.biller.reserve(payerOf(principal), priceCall(pricing, usage).costMicros);
    let speech: TimedSpeech;
    try {
      speech = await transcribe(audio);
    } catch (error) {
      hold.release();
      throw error;
    }
    const charged = await hold.settle({ pricing, usage, reason: `audio.transcriptions ${model.id} (agent tool)` });
    return { ...speech, billed: { seconds, costDollars: microsToDollars(charged.costMicros) } };
  };
}
