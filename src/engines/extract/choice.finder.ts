/**
 * Fields whose value is one of a few choices rather than free text: enums (matched against the schema's own values),
 * booleans (an explicit yes/no/true/false printed after the label), the currency (an ISO code or an unambiguous
 * symbol) and the payment method (the tender line's label). A choice that is not printed stays null.
 */
import type { AmountMention } from './amount-mentions';
import type { FieldSemantics } from './field-semantics';
import { foundIn, type FoundValue } from './found-value';
import type { LayoutIndex } from './layout-index';
import { findLabels, labelPieces, rowPieces, textAfter } from './label-matcher';
import { alnumUpper, splitIdentifier } from './text-normalize';

/** The enum value printed on a row carrying the field's label, or alone on a row of its own. */
export function findEnum(index: LayoutIndex, field: FieldSemantics, values: unknown[]): FoundValue | undefined {
  const phrases = new Map<string, unknown>();
  for (const v of values) {
    if (typeof v !== 'string' && typeof v !== 'number') continue;
    phrases.set(String(v).toLowerCase(), v);
    if (typeof v === 'string') phrases.set(splitIdentifier(v).join(' '), v);
  }
  const candidates = enumCandidates([...phrases.keys()]);
  let best: { found: FoundValue; score: number } | undefined;
  for (const row of index.rows) {
    const labelled = findLabels(row, field.labels).length > 0;
    for (const hit of findLabels(row, candidates(row))) {
      // Without the field's label, only a value printed on a line of its own (a title like `REFUND`) counts.
      const alone = alnumUpper(row.text) === alnumUpper(hit.phrase);
      if (!labelled && !alone) continue;
      const score = (labelled ? 2 : 1) * hit.strength;
      if (best && score <= best.score) continue;
      const text = row.text.slice(hit.start, hit.end);
      best = { found: foundIn(row, hit.start, hit.end, text, labelled ? 0.9 : 0.6, phrases.get(hit.phrase)), score };
    }
  }
  return best?.found;
}

/** Enums up to this size are matched whole against each row (one-letter OCR slips anywhere tolerated). */
const SCANNED_ENUM_MAX = 64;

/**
 * The phrases worth matching against a row. A long enum is indexed by its phrases' first word, and a row is only
 * matched against the phrases whose first word it contains, so matching costs the row's words plus the few
 * phrases that can match, not every row times every value (150,000 values held the server for 71 s). The price:
 * a long enum's first word must be printed exactly (later words still tolerate one-letter slips).
 */
function enumCandidates(phrases: string[]): (row: LayoutIndex['rows'][number]) => string[] {
  if (phrases.length <= SCANNED_ENUM_MAX) return () => phrases;
  const byFirstWord = new Map<string, string[]>();
  for (const phrase of phrases) {
    const first = labelPieces(phrase)[0];
    if (first === undefined) continue;
    const list = byFirstWord.get(first) ?? [];
    list.push(phrase);
    byFirstWord.set(first, list);
  }
  return (row) => {
    const out = new Set<string>();
    for (const piece of rowPieces(row)) {
      for (const phrase of byFirstWord.get(piece.t) ?? []) out.add(phrase);
    }
    return [...out];
  };
}

const TRUE_RE = /^(yes|y|true|ok|paid|✓|✔|☑|\[x\])\b/i;
const FALSE_RE = /^(no|n|false|unpaid|☐|\[ \])(?![\w.])/i;

/** A boolean printed after the field's label (`Paid: Yes`); nothing is inferred from absence. */
export function findBoolean(index: LayoutIndex, field: FieldSemantics): FoundValue | undefined {
  for (const row of index.rows) {
    for (const hit of findLabels(row, field.labels)) {
      const after = textAfter(hit);
      const t = TRUE_RE.exec(after.text);
      const f = t ? undefined : FALSE_RE.exec(after.text);
      const m = t ?? f;
      if (m) return foundIn(row, after.start, after.start + m[0].length, m[0], 0.85, Boolean(t));
    }
  }
  return undefined;
}

const CODES = 'MYR|USD|EUR|GBP|SGD|AUD|CAD|CHF|JPY|CNY|INR|IDR|THB|PHP|HKD|NZD|KRW|VND|AED|SAR|ZAR|BRL|MXN|SEK|NOK|DKK';
const CODE_RE = new RegExp(`\\b(${CODES})\\b`);
const SYMBOLS: [RegExp, string][] = [
  [/(?:^|[\s(])RM(?:\s?\d|\)|\s|$)/, 'MYR'],
  [/€/, 'EUR'],
  [/£/, 'GBP'],
  [/₹/, 'INR'],
  [/\$\s?\d/, '$'],
];

/** The currency: an ISO code as printed, else the code of an unambiguous symbol (`RM` → MYR), else a bare `$`. */
export function findCurrency(index: LayoutIndex): FoundValue | undefined {
  for (const row of index.rows) {
    const m = CODE_RE.exec(row.text);
    if (m) return foundIn(row, m.index, m.index + m[0].length, m[0], 0.9, m[0]);
  }
  for (const [re, code] of SYMBOLS) {
    for (const row of index.rows) {
      const m = re.exec(row.text);
      if (m) return foundIn(row, m.index, m.index + m[0].length, code, code === '$' ? 0.5 : 0.7, code);
    }
  }
  return undefined;
}

/** How the customer paid: the label of the first tender line (`CASH`, `VISA`, `Card`), as printed. */
export function findPaymentMethod(mentions: AmountMention[]): FoundValue | undefined {
  const tender = mentions.find((m) => m.cls === 'tendered');
  if (!tender) return undefined;
  const word = /[A-Za-z][A-Za-z-]*(?:\s+card)?/i.exec(tender.row.text);
  if (!word) return undefined;
  return foundIn(tender.row, word.index, word.index + word[0].length, word[0], 0.7, word[0]);
}
