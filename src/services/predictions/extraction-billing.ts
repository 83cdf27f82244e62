/**
 * What the generate endpoints charge, as the predictions service sees it: a price per credit (a PDF page, an
 * image, a started minute of audio or video) plus the seconds of audio the models file's transcription model hears
 * (at its `per_minute` price), held on the organisation's wallet before any work and settled after.
 *
 * The composition root binds it to the gateway's biller, so extraction and gateway calls share one wallet, one
 * reservation lane per organisation and one 402 `insufficient_credits`; with no price set for either (the default)
 * it is not bound at all and extraction is free.
 */

/** Money held for one extraction between `reserve` and its settlement. */
export interface ExtractionHold {
  /** Debits `credits` and `speechSeconds` (never more than were held) and gives the rest back. Call once. */
  settle(credits: number, reason: string, speechSeconds?: number): Promise<void>;
  /** Gives the hold back without charging (the extraction failed). Idempotent. */
  release(): void;
}

export interface ExtractionWallet {
  /**
   * Holds the price of `maxCredits` credits and `speechSeconds` of transcription (at least the minimum charge;
   * nothing when both are free).
   * A keyed request (`keyId`) holds its key's budget and its organisation's first (docs/admin.md).
   * @throws AppError 402 `insufficient_credits` when the balance less other holds cannot cover it,
   * `key_budget_exceeded` or `org_budget_exceeded` when a budget cannot.
   */
  reserve(orgId: string, maxCredits: number, speechSeconds?: number, keyId?: string | null): Promise<ExtractionHold>;
}

/** The most credits a request can bill: the input's own bound, cut to the pages it asks for. */
export function creditBound(maxCredits: number, pageIndices: number[] | null): number {
  const bound = Math.max(1, Math.ceil(maxCredits));
  if (!pageIndices) return bound;
  return Math.max(1, Math.min(bound, new Set(pageIndices).size));
}
