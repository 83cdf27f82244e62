/**
 * Names for the narrower repair and layout rules of the extractor, so the receipts bench can switch each off and see
 * how many merchants it earns its place on: a rule that changes only one development merchant's answer has
 * memorised that merchant, not learned receipts (`bench/receipts-cv.ts` fits the switches per fold, so such a rule
 * cannot help its own fold). The service always runs with every listed rule on; rules that did not earn their
 * place were deleted, not switched off.
 *
 * The unit the bench judges is a mechanism (`RULE_GROUPS`): one general statement about receipts, carried out by
 * the parts listed under it (each part still has a name, so the bench's `--parts` can show what each part changes).
 * A part is not judged alone: a part that fires on one receipt is one instance of its mechanism, and the mechanism
 * earns its place only if it is right on several merchants.
 *
 * Extraction is synchronous, so `withRulesOff` can set the switches for one call without leaking into another.
 */

export const RULE_GROUPS = {
  /**
   * A word one OCR slip away from a word of the public vocabularies (states and countries, towns, street words,
   * business words, legal-entity suffixes) is read as that word.
   */
  'vocabulary-repair': [
    /** A place word split around a confusable glyph is joined (`SHAH AI AM`). */
    'split-words',
    /** A word one edit from a state or country name (`SELANGDR`). */
    'region-repair',
    /** A substituted letter in a long town word (`FETALING`). */
    'city-repair',
    /** A word one edit from a long street word (`PERSIARAN`). */
    'street-repair',
    /** A word one edit from a long business word (`PERNIAGAAN`). */
    'business-repair',
    /** `SDN BHD` glued into one garbled word (`SLIBHD`). */
    'glued-suffix',
  ],
  /** House and section numbers: glyphs OCR confuses inside them are read back (`&` as `8`, `SS` as `S5`). */
  'number-glyphs': [
    /** `&` read as `8` between house numbers of one series. */
    'ampersand-series',
    /** `S5` opening a section code (`S512/3A`) is `SS`. */
    'section-code',
  ],
  /**
   * An address's postcode names its town and state (a public gazetteer): a town or state garbled beside a real
   * postcode is read as that postcode's own (`40 150 S WH ALAM` → `40150 SHAH ALAM`).
   */
  'postcode-places': ['postcode-places'],
  /** Address words agree with a word the block prints more often (`Contoh`/`Cantoh`). */
  'address-agreement': ['address-agreement'],
  /**
   * A name printed over two stacked lines is one name when one half cannot stand alone: a legal name that names only
   * a kind of business takes the line above, a line of continuation words joins the line above it.
   */
  'name-over-lines': [
    /** A legal name that cannot stand alone takes the line above it. */
    'name-head',
    /** `TRADING` / `ENTERPRISE` alone under a name continues it. */
    'name-continuation',
  ],
  /**
   * Where the address block starts and stops is read from the layout: an outlet line over the street is not part of
   * it, plain lines stacked over a postcode-first line are, a street line under the title counts when none is under
   * the name, a trailing comma continues the block, a field label beside it ends it.
   */
  'address-extent': [
    /** A branch/outlet line repeating a word of the name, over a numbered address line, is skipped. */
    'outlet-line',
    /** Plain lines stacked over a postcode-first line are its street. */
    'postcode-head',
    /** A numbered street line under the title is the address when none is under the name. */
    'street-under-title',
    /** A line ending in a comma continues an address past its postcode. */
    'comma-continues',
    /** A labelled field beside an address line's end is cut off. */
    'address-label-cut',
  ],
  /**
   * When no total label can be read, or its amount was misread, the payment lines and the other amounts decide: the
   * amount a payment settles exactly, tendered − change, the largest amount printed twice; a total far above the
   * subtotal is not believed.
   */
  'total-evidence': [
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
  ],
  /**
   * What sits at the edges of a header line and is not part of the name or address is dropped: barely legible
   * specks, a short mark set far apart, a bracketed registration number closing a name, and what follows a legal
   * suffix (the suffix ends the name).
   */
  'name-edges': [
    /** Barely legible specks at a line's ends (`ee`, a stray `i`). */
    'edge-specks',
    /** A short mark set far apart at a line's end. */
    'lone-mark',
    /** A registration number in brackets closing a name line. */
    'trailing-number',
    /** A legal suffix ends the name: a number or a short fragment after it, and a label before it, are dropped. */
    'suffix-ends-name',
  ],
} as const;

export type RuleGroup = keyof typeof RULE_GROUPS;
export type RuleName = (typeof RULE_GROUPS)[RuleGroup][number];

/** The mechanisms, in the order the bench reports them. */
export const RULES = Object.keys(RULE_GROUPS) as RuleGroup[];

/** Every part of every mechanism. */
export const RULE_PARTS: readonly RuleName[] = RULES.flatMap((g) => RULE_GROUPS[g]);

let off: ReadonlySet<string> = new Set();

/** The rule is on for the extraction running now. */
export const ruleOn = (name: RuleName): boolean => !off.has(name);

/** Runs `fn` with `rules` (mechanisms or parts) switched off (the receipts bench only). */
export function withRulesOff<T>(rules: readonly string[], fn: () => T): T {
  const was = off;
  off = new Set(rules.flatMap((r) => (r in RULE_GROUPS ? [...RULE_GROUPS[r as RuleGroup]] : [r])));
  try {
    return fn();
  } finally {
    off = was;
  }
}
