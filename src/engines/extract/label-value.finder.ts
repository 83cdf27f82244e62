/**
 * The general "label: value" reader: find a field's label on the page, then read the value to its right on the same
 * row or, failing that, on the row below in the same column, and keep it only if it has the shape the field needs
 * (an identifier has a digit, a phone has 7-15 digits, a number parses...). Values of other labels on the same row
 * (`Doc No: 123 Date: 01/02/2018`) are cut off.
 */
import type { FieldSemantics } from './field-semantics';
import { foundIn, type FoundValue } from './found-value';
import type { LayoutIndex, Row } from './layout-index';
import { findLabels, textAfter, type LabelHit } from './label-matcher';
import { ROLE_LABELS } from './vocabulary';
import { findEmails, findIdentifier, findPhones, findUrls, parseNumber, type PatternMatch } from './value-patterns';

const OTHER_LABELS = [...new Set(Object.values(ROLE_LABELS).flat())].filter((l) => l.length >= 3);

/** Shape check per role: returns the part of `text` that is the value, or undefined. */
export type ValueShape = (text: string) => PatternMatch<unknown> | undefined;

const whole = (text: string): PatternMatch<unknown> | undefined =>
  text ? { start: 0, end: text.length, text, value: text } : undefined;

function shapeFor(field: FieldSemantics, numeric: boolean): ValueShape {
  if (numeric) {
    return (text) => {
      const m = /-?\(?[\d][\d,. ]*\)?/.exec(text);
      const value = m ? parseNumber(m[0]) : undefined;
      return m && value !== undefined
        ? { start: m.index, end: m.index + m[0].trimEnd().length, text: m[0].trim(), value }
        : undefined;
    };
  }
  switch (field.role) {
    case 'phone':
    case 'fax':
      return (text) => findPhones(text)[0];
    case 'email':
      return (text) => findEmails(text)[0];
    case 'url':
      return (text) => findUrls(text)[0];
    case 'reference':
    case 'tax-id':
      return (text) => findIdentifier(text);
    default:
      return whole;
  }
}

/** Cuts `text` at the first label of another field printed after the value starts. */
function cutAtOtherLabel(row: Row, start: number, own: readonly string[]): number {
  const rest = { ...row, text: row.text.slice(start) };
  const next = findLabels(rest, OTHER_LABELS).find((h) => h.start > 0 && !own.includes(h.phrase));
  return next ? start + next.start : row.text.length;
}

function readAfter(hit: LabelHit, field: FieldSemantics, shape: ValueShape): FoundValue | undefined {
  const after = textAfter(hit);
  const stop = cutAtOtherLabel(hit.row, after.start, field.labels);
  const text = hit.row.text.slice(after.start, stop).replace(/[\s:;,|]+$/, '');
  const m = shape(text);
  if (!m) return undefined;
  return foundIn(hit.row, after.start + m.start, after.start + m.end, m.text.trim(), hit.strength, m.value);
}

function readBelow(index: LayoutIndex, hit: LabelHit, shape: ValueShape): FoundValue | undefined {
  const labelBox = hit.row.words.find((w) => w.end >= hit.end)?.box ?? hit.row.box;
  for (const row of index.rows.slice(hit.row.index + 1, hit.row.index + 3)) {
    if (row.page !== hit.row.page) break;
    const words = row.words.filter(
      (w) => w.box.x1 > labelBox.x0 - 5 && w.box.x0 < labelBox.x1 + (labelBox.x1 - labelBox.x0) * 4,
    );
    if (words.length === 0) continue;
    const start = words[0]?.start ?? 0;
    const end = words[words.length - 1]?.end ?? row.text.length;
    const m = shape(row.text.slice(start, end));
    if (m) return foundIn(row, start + m.start, start + m.end, m.text.trim(), hit.strength * 0.8, m.value);
    return undefined;
  }
  return undefined;
}

/**
 * The value introduced by one of the field's labels. Labels earlier in `field.labels` are more specific and win;
 * among equal labels the first on the page wins.
 */
export function findLabelledValue(index: LayoutIndex, field: FieldSemantics, numeric: boolean): FoundValue | undefined {
  const shape = shapeFor(field, numeric);
  for (const [rank, label] of field.labels.entries()) {
    // Exact readings of the label first, then fuzzy ones; each in reading order.
    const hits = index.rows.flatMap((row) => findLabels(row, [label])).sort((a, b) => b.strength - a.strength);
    for (const hit of hits) {
      const found = readAfter(hit, field, shape) ?? readBelow(index, hit, shape);
      if (found) return { ...found, strength: found.strength * Math.max(0.6, 1 - rank * 0.04) };
    }
  }
  return undefined;
}

/** Registration, tax and document numbers are long digit runs too; a phone number is never on their lines. */
export const mayHoldContact = (row: Row): boolean =>
  !/\b(gst|vat|tax|reg|co\.?\s*no|company|invoice|inv|receipt|doc|id|no)\b|\d-[A-Z]\b/i.test(row.text);

/** The first value of a shape anywhere in `rows` (a phone or e-mail printed without a label). */
export function findUnlabelled(rows: Row[], field: FieldSemantics): FoundValue | undefined {
  const shape = shapeFor(field, false);
  if (shape === whole) return undefined;
  for (const row of rows) {
    if (!mayHoldContact(row)) continue;
    const m = shape(row.text);
    if (m) return foundIn(row, m.start, m.end, m.text, 0.5, m.value);
  }
  return undefined;
}
