/**
 * Every money amount on the page with the label that introduces it, classified into the summary roles of a receipt
 * or invoice (total, subtotal, tax, discount, rounding, tendered, change, counts...). The amount finders choose among
 * these mentions; classifying once keeps their choices consistent with each other.
 */
import type { LayoutIndex, Row } from './layout-index';
import { findLabels } from './label-matcher';
import { repairNumeric } from './text-normalize';
import { findAmounts, type Amount, type PatternMatch } from './value-patterns';

export type AmountClass =
  'total' | 'subtotal' | 'tax' | 'discount' | 'rounding' | 'tendered' | 'change' | 'count' | 'savings' | 'tip' | 'none';

/** One amount and what its row says about it. */
export interface AmountMention {
  row: Row;
  match: PatternMatch<Amount>;
  cls: AmountClass;
  /** The label says "final" (grand/net/payable/due/incl. tax...). */
  strong: boolean;
  labelStrength: number;
  /** Position among all mentions, top to bottom. */
  order: number;
}

const CLASS_LABELS: [AmountClass, string][] = [
  ...pairs(
    'total',
    'total|grand total|amount due|amount payable|total payable|total due|balance due|net total|nett total',
  ),
  ...pairs(
    'total',
    'net amt|net amount|total amount|total amt|jumlah|amount to pay|to pay|total sales|total rm|amt due|amt payable|nett amount|nett amt',
  ),
  ...pairs('total', 'amount to be paid|amount payable|due'),
  ...pairs('subtotal', 'subtotal|sub total|sub-total|gross amt|gross amount|grossamt|excluded gst|excl gst|excl. gst'),
  ...pairs('tax', 'total gst|total tax|total vat|gst|vat|tax|sst|service tax|sales tax|included in total'),
  ...pairs('discount', 'discount|disc|member discount|less'),
  ...pairs('rounding', 'rounding|rounding adj|rounding adjustment|round adj|round off|adj'),
  ...pairs('tendered', 'cash|tendered|tender|cash tendered|received|paid|payment|visa|mastercard|master|amex'),
  ...pairs('tendered', 'card|credit card|debit card|credit|debit|e-wallet|ewallet|boost|grabpay'),
  ...pairs('change', 'change|change due|change amt|kembalian'),
  ...pairs('count', 'total qty|total quantity|qty|quantity|total items|item count|tem count|no. items|items|pcs'),
  ...pairs('savings', 'savings|saving|total savings|total saving|you saved|points|point'),
  ...pairs('tip', 'tip|gratuity|service charge|serv charge|serv. charge|svc charge|svc. charge|service chg'),
];

function pairs(cls: AmountClass, phrases: string): [AmountClass, string][] {
  return phrases.split('|').map((p) => [cls, p]);
}

const PHRASES = CLASS_LABELS.map(([, p]) => p);
const CLASS_OF = new Map(CLASS_LABELS.map(([c, p]) => [p, c]));
const EXCLUDING = /\b(excl|excluding|excluded|exclusive|before|sub|w\/o|without)\b/i;
const FINAL = /\b(incl|inclusive|including|included|with|after|payable|due|grand|nett?|final)\b/i;

const INCLUDING_TAX = /\b(incl|inclusive|including)\b\.?\s*(of\s+)?(gst|tax|vat|sst)\b/i;

function classify(row: Row, from: number, to: number): Omit<AmountMention, 'row' | 'match' | 'order'> {
  const hits = findLabels(row, PHRASES).filter((h) => h.start >= from && h.end <= to);
  const first = hits[0];
  if (!first) return { cls: 'none', strong: false, labelStrength: 0 };
  let cls = CLASS_OF.get(first.phrase) ?? 'none';
  const segment = row.text.slice(first.start, to);
  let strong = false;
  // An amount paid "including GST" is what the document charges: a tender is never qualified by tax.
  if (cls === 'tendered' && INCLUDING_TAX.test(segment)) {
    return { cls: 'total', strong: true, labelStrength: first.strength };
  }
  if (cls === 'total') {
    if (EXCLUDING.test(segment)) cls = 'subtotal';
    else strong = FINAL.test(segment) || first.phrase !== 'total';
  }
  return { cls, strong, labelStrength: first.strength };
}

/**
 * Puts right, without changing the text's length (so offsets still point at the same words), the ways OCR splits or
 * garbles a printed amount: a space after the decimal point (`RM 170. 00`, `RM4.0 0`), a currency misread as
 * `RH` / `RN` / `RIM` before digits, a `1` after `RM` read as `I` (`RMI11.90`), and a hyphen for the decimal point after a currency (`RM 14-10`).
 */
export function repairAmountText(text: string): string {
  return text
    .replace(/(?<=\d)\.\s(\d{2})(?![\d.,])/g, '.$1 ')
    .replace(/(?<=\d)\.(\d)\s(\d)(?![\d.,])/g, '.$1$2 ')
    .replace(/(?<![A-Za-z])(?:RH|RN)(?=\s?\d)/g, 'RM')
    .replace(/(?<![A-Za-z])RIM(?=\d)/g, 'RM ')
    .replace(/(?<![A-Za-z])RM[Il|](?=\d)/g, 'RM1')
    .replace(/(?<=\bRM\s?\d+)-(?=\d{2}$)/, '.');
}

/** All amounts of the document, top to bottom, each classified by the label before it on its row. */
export function collectAmounts(index: LayoutIndex): AmountMention[] {
  const out: AmountMention[] = [];
  for (const row of index.rows) {
    const text = repairAmountText(row.text)
      .split(' ')
      .map((t) => repairNumeric(t))
      .join(' ');
    const repaired: Row = text === row.text ? row : { ...row, text };
    let from = 0;
    for (const match of findAmounts(repaired.text)) {
      // A percentage (`GST @0.00%`) is a rate, not money: its label belongs to the amount after it.
      if (/^\s?%/.test(repaired.text.slice(match.end))) continue;
      const labelled = classify(repaired, from, match.start);
      // A row with its label but no amount, followed by an amount alone on the next row, shares the label.
      const above = index.rows[row.index - 1];
      const inherited =
        labelled.cls === 'none' && from === 0 && above && findAmounts(above.text).length === 0
          ? classify(above, 0, above.text.length)
          : undefined;
      out.push({
        row: repaired,
        match,
        ...(inherited && inherited.cls !== 'none' ? inherited : labelled),
        order: out.length,
      });
      from = match.end;
    }
  }
  return out;
}
