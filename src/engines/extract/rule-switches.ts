/**
 * Names for the narrower repair and layout rules of the extractor, so the receipts bench can switch each off and see
 * how many merchants it earns its place on: a rule that changes only one development merchant's answer has
 * memorised that merchant, not learned receipts (`bench/receipts-cv.ts` fits the switches per fold, so such a rule
 * cannot help its own fold). The service always runs with every listed rule on; rules that did not earn their
 * place were deleted, not switched off.
 *
 * Extraction is synchronous, so `withRulesOff` can set the switches for one call without leaking into another.
 */

export const RULES = [
  /** Address words agree with a word the block prints more often (`Contoh`/`Cantoh`). */
  'address-agreement',
  /** The name read from a more legible copy elsewhere on the page (a footer). */
  'better-reading',
  /** A branch/outlet line repeating a word of the name, over a numbered address line, is skipped. */
  'outlet-line',
  /** Plain lines stacked over a postcode-first line are its street. */
  'postcode-head',
  /** `&` read as `8` between house numbers of one series. */
  'ampersand-series',
  /** `S5` opening a section code (`S512/3A`) is `SS`. */
  'section-code',
  /** A place word split around a confusable glyph is joined (`SHAH AI AM`). */
  'split-words',
  /** A substituted letter in a long town word (`FETALING`). */
  'city-repair',
  /** A word one edit from a state or country name (`SELANGDR`). */
  'region-repair',
  /** A word one edit from a long street word (`PERSIARAN`). */
  'street-repair',
  /** A word one edit from a long business word (`PERNIAGAAN`). */
  'business-repair',
  /** A legal name that cannot stand alone takes the line above it. */
  'name-head',
  /** `TRADING` / `ENTERPRISE` alone under a name continues it. */
  'name-continuation',
  /** A numbered street line under the title is the address when none is under the name. */
  'street-under-title',
  /** A line ending in a comma continues an address past its postcode. */
  'comma-continues',
  /** A labelled field beside an address line's end is cut off. */
  'address-label-cut',
  /** A lone letter far to the right of a line is a mark. */
  'lone-mark',
  /** `SDN BHD` glued into one garbled word (`SLIBHD`). */
  'glued-suffix',
  /** A total whose decimal point OCR lost, read as tendered − change. */
  'total-undotted',
  /** An amount after the total whose whole part OCR lost (`.50`). */
  'total-truncated',
  /** With no total label, the amount a payment settles exactly. */
  'total-settled',
  /** With no total label and no payment, the largest amount printed twice. */
  'total-repeated',
  /** A total far above the subtotal is a misread. */
  'total-implausible',
] as const;

export type RuleName = (typeof RULES)[number];

let off: ReadonlySet<string> = new Set();

/** The rule is on for the extraction running now. */
export const ruleOn = (name: RuleName): boolean => !off.has(name);

/** Runs `fn` with `rules` switched off (the receipts bench only). */
export function withRulesOff<T>(rules: readonly string[], fn: () => T): T {
  const was = off;
  off = new Set(rules);
  try {
    return fn();
  } finally {
    off = was;
  }
}
