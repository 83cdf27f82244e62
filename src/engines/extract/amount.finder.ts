/**
 * Chooses the amount for money fields. The final total is the last total-labelled amount before the payment lines,
 * preferring "final" labels (grand/net/payable/incl. tax). "Cash tendered − change" is the amount actually paid and
 * overrides the labels when they disagree: a total-labelled amount equal to it wins; a total line whose decimal point
 * OCR lost (`212` for 2.12), or an amount after the total whose whole part it lost (`.50` for 8.50), is read with it; else a printed amount equal to it close to the labelled total (rounding)
 * is taken. With no total label at all, the unlabelled amount printed just above the payment lines is the fallback,
 * else the largest amount when it is printed twice.
 * Other summary roles (subtotal, tax, discount, ...) take the last amount of their class before the payment lines.
 */
import type { AmountClass, AmountMention } from './amount-mentions';
import { foundIn, type FoundValue } from './found-value';
import type { LayoutIndex } from './layout-index';
import { findLabels } from './label-matcher';
import { ruleOn } from './rule-switches';

const cents = (v: number): number => Math.round(v * 100);

function paymentStart(mentions: AmountMention[]): number {
  const first = mentions.find((m) => m.cls === 'tendered' || m.cls === 'change');
  return first ? first.row.index : Number.POSITIVE_INFINITY;
}

/** Amounts (in cents) equal to tendered − change for a tender line followed closely by a change line. */
function paidDifferences(mentions: AmountMention[]): Set<number> {
  const out = new Set<number>();
  for (const t of mentions.filter((m) => m.cls === 'tendered' && m.match.value.value > 0)) {
    for (const c of mentions.filter((m) => m.cls === 'change' && m.order > t.order && m.order - t.order <= 4)) {
      const diff = cents(t.match.value.value) - cents(c.match.value.value);
      if (diff > 0) out.add(diff);
    }
  }
  return out;
}

const toFound = (m: AmountMention, strength: number): FoundValue =>
  foundIn(m.row, m.match.start, m.match.end, m.match.text, strength, m.match.value.value);

function rankTotals(mentions: AmountMention[], paid: Set<number>): { m: AmountMention; score: number }[] {
  const payStart = paymentStart(mentions);
  const totals = mentions.filter((m) => m.cls === 'total' && m.match.value.value > 0);
  const lastBefore = totals.filter((m) => m.row.index < payStart).pop();
  const roundingRow = mentions.find((m) => m.cls === 'rounding')?.row.index ?? Number.POSITIVE_INFINITY;
  const maxValue = Math.max(0, ...totals.map((m) => m.match.value.value));
  return totals
    .map((m) => {
      let score = m.labelStrength + (m.strong ? 0.5 : 0);
      if (m === lastBefore) score += 0.5;
      if (m.row.index > payStart) score -= 1;
      // The amount after a rounding adjustment is the one paid: it beats an "inclusive of tax" total above it.
      if (m.row.index > roundingRow && m.row.index < payStart) score += 0.8;
      if (paid.has(cents(m.match.value.value))) score += 1;
      if (m.match.value.value === maxValue) score += 0.2;
      // A total row with several amounts is a table's column totals (a tax summary: net, tax), not the amount due.
      if (mentions.filter((o) => o.row === m.row).length > 1) score -= 0.7;
      return { m, score };
    })
    .sort((a, b) => b.score - a.score);
}

const TOTAL_WORDS = ['total', 'grand total', 'net total', 'nett total', 'amount due', 'total payable', 'net amt'];

/** A total line before the payment lines whose number lost its decimal point, read as the paid amount. */
function undottedTotal(index: LayoutIndex, paid: Set<number>, payStart: number): FoundValue | undefined {
  for (const row of index.rows.slice(0, Number.isFinite(payStart) ? payStart : undefined)) {
    const hit = findLabels(row, TOTAL_WORDS)[0];
    if (!hit || /excl|sub|qty|quantity/i.test(row.text)) continue;
    for (const m of row.text.slice(hit.end).matchAll(/(?<![\d.,])\d{3,7}(?![\d.,])/g)) {
      if (!paid.has(Number(m[0]))) continue;
      const start = hit.end + m.index;
      const value = Number(m[0]) / 100;
      return foundIn(row, start, start + m[0].length, value.toFixed(2), 0.55, value);
    }
  }
  return undefined;
}

/**
 * An amount whose whole part OCR lost (`Total Payable : .50`), printed after the labelled total and before the payment
 * lines, read as the paid amount (tendered − change) when that amount ends in the same cents and is within a rounding
 * adjustment of the labelled total (`8.48` + rounding `0.02` = `8.50`).
 */
function truncatedTotal(
  index: LayoutIndex,
  paid: Set<number>,
  after: number,
  payStart: number,
  near: number,
): FoundValue | undefined {
  for (const row of index.rows.slice(after + 1, Number.isFinite(payStart) ? payStart : after + 4)) {
    for (const m of row.text.matchAll(/(?<=[\s:])\.(\d{2})(?![\d.,])/g)) {
      const hit = [...paid].find((p) => p % 100 === Number(m[1]) && Math.abs(p - near) <= Math.max(10, near * 0.02));
      if (hit === undefined) continue;
      const value = hit / 100;
      return foundIn(row, m.index, m.index + m[0].length, value.toFixed(2), 0.55, value);
    }
  }
  return undefined;
}

/** A total far above the subtotal printed before it (more than any tax) is a misread, e.g. a digit too many. */
function implausible(found: FoundValue | undefined, mentions: AmountMention[]): boolean {
  const subtotal = mentions.filter((m) => m.cls === 'subtotal' && m.match.value.value > 0).pop();
  return Boolean(
    found && subtotal && typeof found.parsed === 'number' && found.parsed > subtotal.match.value.value * 1.5,
  );
}

/** The document's final total, or undefined when no amount can be defended. */
export function findTotal(index: LayoutIndex, mentions: AmountMention[]): FoundValue | undefined {
  const found = chooseTotal(index, mentions);
  return ruleOn('total-implausible') && implausible(found, mentions) ? undefined : found;
}

function chooseTotal(index: LayoutIndex, mentions: AmountMention[]): FoundValue | undefined {
  const payStart = paymentStart(mentions);
  const paid = paidDifferences(mentions);
  const ranked = rankTotals(mentions, paid);
  const best = ranked[0];
  const bestValue = best ? cents(best.m.match.value.value) : undefined;
  if (best && (paid.size === 0 || paid.has(bestValue ?? -1))) {
    return toFound(best.m, Math.min(1, 0.45 + best.score / 4));
  }
  if (paid.size > 0) {
    const undotted = ruleOn('total-undotted') ? undottedTotal(index, paid, payStart) : undefined;
    if (undotted) return undotted;
    const labelledBefore = ranked.find((r) => r.m.row.index < payStart);
    const near = labelledBefore ? cents(labelledBefore.m.match.value.value) : undefined;
    const truncated =
      ruleOn('total-truncated') &&
      labelledBefore &&
      truncatedTotal(index, paid, labelledBefore.m.row.index, payStart, near ?? 0);
    if (truncated) return truncated;
    const agreeing = mentions.filter(
      (m) =>
        paid.has(cents(m.match.value.value)) &&
        m.cls !== 'tendered' &&
        m.cls !== 'change' &&
        m.row.index < payStart &&
        (near === undefined || Math.abs(cents(m.match.value.value) - near) <= Math.max(10, near * 0.02)),
    );
    const pick = agreeing.pop();
    if (pick) return toFound(pick, near === undefined ? 0.6 : 0.75);
  }
  if (best) return toFound(best.m, Math.min(1, 0.35 + best.score / 5));
  const settled = ruleOn('total-settled') ? settledAmount(mentions) : undefined;
  if (settled) return settled;
  const repeated = ruleOn('total-repeated') ? repeatedLargest(mentions) : undefined;
  if (repeated) return repeated;
  // No total label survived OCR: the unlabelled amount just above the payment lines.
  const before = mentions.filter((m) => m.row.index < payStart && Number.isFinite(payStart));
  const last = before[before.length - 1];
  if (last && last.cls === 'none' && last.row.index >= payStart - 2 && last.match.value.value > 0) {
    return toFound(last, 0.4);
  }
  return undefined;
}

/**
 * With no total label at all, the amount a payment settles exactly: the subtotal when the amount tendered equals it,
 * else the amount tendered when no change is given back (no change line, or change 0.00). All are printed values.
 */
function settledAmount(mentions: AmountMention[]): FoundValue | undefined {
  const tendered = mentions.filter((m) => m.cls === 'tendered' && m.match.value.value > 0);
  const first = tendered[0];
  if (!first) return undefined;
  const subtotal = mentions
    .filter((m) => m.cls === 'subtotal' && m.match.value.value > 0 && m.order < first.order)
    .pop();
  if (subtotal && tendered.some((t) => cents(t.match.value.value) === cents(subtotal.match.value.value))) {
    return toFound(subtotal, 0.6);
  }
  const change = mentions.filter((m) => m.cls === 'change' && m.order > first.order);
  if (change.some((c) => c.match.value.value !== 0)) return undefined;
  return toFound(first, 0.5);
}

/**
 * With no total label OCR could read and no payment to settle it (`1olal Sales ... RM123.40`, `Nel leta! RM123.40`):
 * the largest amount on the page when it is printed on two or more rows (a total is repeated: sales incl. tax, net
 * total), none of them a tender, change or count. A single largest amount could be anything (an item, a tender).
 */
function repeatedLargest(mentions: AmountMention[]): FoundValue | undefined {
  const money = mentions.filter((m) => m.cls !== 'count' && m.match.value.value > 0);
  const max = Math.max(0, ...money.map((m) => cents(m.match.value.value)));
  const top = money.filter((m) => cents(m.match.value.value) === max);
  if (new Set(top.map((m) => m.row.index)).size < 2) return undefined;
  if (top.some((m) => m.cls === 'tendered' || m.cls === 'change')) return undefined;
  const last = top[top.length - 1];
  return last ? toFound(last, 0.4) : undefined;
}

/** The last amount of a summary class (subtotal, tax, ...) printed before the payment lines. */
export function findAmountOfClass(mentions: AmountMention[], cls: AmountClass): FoundValue | undefined {
  const payStart = cls === 'tendered' || cls === 'change' ? Number.POSITIVE_INFINITY : paymentStart(mentions);
  const of = mentions.filter((m) => m.cls === cls);
  const before = of.filter((m) => m.row.index < payStart).pop();
  if (before) return toFound(before, 0.5 + 0.4 * before.labelStrength);
  // Only in a summary table after the payment lines (`GST Summary ... Tax`): the row's last amount is the class's.
  const first = of[0];
  const last = first && mentions.filter((m) => m.row === first.row).pop();
  return last ? toFound(last, 0.4 + 0.3 * last.labelStrength) : undefined;
}
