/**
 * How much each kind of layout evidence counts when the issuer finder chooses the business name among the header's
 * candidate lines. The evidence is measured per candidate (`issuer.finder.ts`); these weights are the only numbers of
 * that choice, kept apart so the receipts bench can fit them on some merchants and score them on others
 * (`bench/receipts-cv.ts`: merchant-grouped cross-validation). The values are fitted on the development receipts by
 * `npm run train:receipt-lines` (scripts/train-receipt-lines.ts) into name-weights.generated.ts, on a fixed grid from
 * fixed priors; none of them names or describes a merchant.
 */
import { FITTED_NAME_WEIGHTS } from './name-weights.generated';

/** Evidence about one candidate line (or lines) for the business name, each 0..1 unless said otherwise. */
export interface NameFeatures {
  /** Mean OCR confidence of the line. */
  ocr: number;
  /** Candidates before this one in the header (0 for the first). */
  rank: number;
  /** A legal-entity suffix (`SDN BHD`, `LTD`, `S/B`). */
  legal: number;
  /** A word naming a kind of business (`TRADING`, `RESTORAN`), when it is not the whole line; 0 with a suffix. */
  business: number;
  /** At least 80 % of its letters are capitals. */
  upper: number;
  /** All its letters are lower-case (a note, not a name). */
  lower: number;
  /** Printed taller than the median row (1 at 1.3× and above). */
  tall: number;
  /** Width against the widest header line (1: it is the widest). */
  wide: number;
  /** Printed after a document title (`TAX INVOICE`, `RECEIPT`). */
  afterTitle: number;
  /** A named business (suffix or business word) with a postal-address line right under it. */
  addressBelow: number;
  /** A registration number printed on the line or right under it (`(123456-X)`, `Co. No. ...`). */
  registration: number;
  /** Region or country words (`SELANGOR`, `MALAYSIA`): a branch or place label more than a name. */
  region: number;
  /** Words of a branch, outlet or staff label (`BRANCH`, `OUTLET`, `CASHIER`). */
  branch: number;
}

export type NameWeights = Readonly<Record<keyof NameFeatures, number>>;

export const NAME_FEATURES: readonly (keyof NameFeatures)[] = [
  'ocr',
  'rank',
  'legal',
  'business',
  'upper',
  'lower',
  'tall',
  'wide',
  'afterTitle',
  'addressBelow',
  'registration',
  'region',
  'branch',
];

/** The weights the service runs with: fitted by `npm run train:receipt-lines` (name-weights.generated.ts). */
export const NAME_WEIGHTS: NameWeights = FITTED_NAME_WEIGHTS;

/** A candidate's score: the weighted sum of its evidence. */
export function scoreFeatures(features: NameFeatures, weights: NameWeights): number {
  let score = 0;
  for (const key of NAME_FEATURES) score += features[key] * weights[key];
  return score;
}
