/**
 * The one shape every finder returns: a value as printed (plus its parsed form), where it was printed, and how sure
 * the finder is. The engine turns it into the result's data, confidence and grounding.
 */
import type { Box } from '../types';
import { span, type Row } from './layout-index';

/** A value located on the page. */
export interface FoundValue {
  /** The value as printed (trimmed). */
  text: string;
  /** A parsed form when the finder has one (number for amounts, ISO string for dates, boolean...). */
  parsed?: unknown;
  /** 0..1: how well the value matched its label, pattern and position. */
  strength: number;
  /** 0..1: mean OCR confidence of the words the value came from. */
  ocr: number;
  page: number;
  box: Box;
  /** For values printed over several lines (an address), each line as printed. */
  lines?: string[];
}

/** A value made of characters `[start, end)` of `row`. */
export function foundIn(
  row: Row,
  start: number,
  end: number,
  text: string,
  strength: number,
  parsed?: unknown,
): FoundValue {
  const s = span(row, start, end);
  const found: FoundValue = { text, strength: clamp01(strength), ocr: s.confidence, page: row.page, box: s.box };
  if (parsed !== undefined) found.parsed = parsed;
  return found;
}

/** A value spanning whole rows (an address block, a two-line company name); `lines` are its printed lines. */
export function foundInRows(rows: Row[], text: string, strength: number, lines?: string[]): FoundValue | undefined {
  const first = rows[0];
  if (!first) return undefined;
  const same = rows.filter((r) => r.page === first.page);
  const ocr = rows.reduce((s, r) => s + r.confidence, 0) / rows.length;
  return {
    ...(lines ? { lines } : {}),
    text,
    strength: clamp01(strength),
    ocr,
    page: first.page,
    box: {
      x0: Math.min(...same.map((r) => r.box.x0)),
      y0: Math.min(...same.map((r) => r.box.y0)),
      x1: Math.max(...same.map((r) => r.box.x1)),
      y1: Math.max(...same.map((r) => r.box.y1)),
    },
  };
}

export const clamp01 = (v: number): number => Math.max(0, Math.min(1, v));

/** The confidence reported for a value: match strength weighted by OCR confidence, rounded to 3 places. */
export const confidenceOf = (f: FoundValue): number =>
  Math.round(clamp01(f.strength * (0.4 + 0.6 * f.ocr)) * 1000) / 1000;
