/**
 * Builds DocumentLayouts by hand for the extractor's tests: each row is a string (one left-aligned line) or a list of
 * `[x, text]` segments (columns). Words get boxes from their character positions (10 px per character, rows 30 px
 * apart), so "right of" and "below" behave as on a real page.
 */
import type { DocumentLayout, LayoutLine, LayoutPage } from '../../../../src/engines/types';

/** A row: one left-aligned line, `[x, text]` segments, or a line with its own OCR confidence. */
export type RowSpec = string | [number, string][] | { text: string; confidence: number };

const CHAR = 10;
const ROW = 30;

function line(x: number, y: number, text: string, confidence: number): LayoutLine {
  const words = [];
  let at = 0;
  for (const part of text.split(' ')) {
    if (part) {
      const x0 = x + at * CHAR;
      words.push({ text: part, box: { x0, y0: y, x1: x0 + part.length * CHAR, y1: y + 20 }, confidence });
    }
    at += part.length + 1;
  }
  const x1 = Math.max(...words.map((w) => w.box.x1));
  return { text: words.map((w) => w.text).join(' '), box: { x0: x, y0: y, x1, y1: y + 20 }, confidence, words };
}

/** One page from row specs; `confidence` applies to every word unless a row brings its own. */
export function pageOf(rows: RowSpec[], options: { index?: number; confidence?: number } = {}): LayoutPage {
  const confidence = options.confidence ?? 0.95;
  const lines: LayoutLine[] = [];
  rows.forEach((row, i) => {
    const y = 20 + i * ROW;
    if (!Array.isArray(row)) {
      const own = typeof row === 'string' ? { text: row, confidence } : row;
      if (own.text.trim()) lines.push(line(20, y, own.text, own.confidence));
      return;
    }
    for (const [x, text] of row) if (text.trim()) lines.push(line(x, y, text, confidence));
  });
  return { index: options.index ?? 0, width: 800, height: 40 + rows.length * ROW, source: 'ocr', lines, status: 'ok' };
}

/** A one-page layout. */
export const layoutOf = (rows: RowSpec[], options: { confidence?: number } = {}): DocumentLayout => ({
  pages: [pageOf(rows, options)],
});

/** The evaluator's receipt schema (four required strings, descriptions as it sends them). */
export const RECEIPT_SCHEMA = {
  type: 'object',
  properties: {
    company: {
      type: 'string',
      description:
        'Name of the business that issued the receipt, exactly as printed (prefer the legal entity, e.g. "... SDN BHD", over a brand logo)',
    },
    address: { type: 'string', description: "The issuing business's address, exactly as printed" },
    date: { type: 'string', description: 'Transaction date, exactly as printed' },
    total: { type: 'string', description: 'Final total amount paid, exactly as printed' },
  },
  required: ['company', 'address', 'date', 'total'],
  additionalProperties: false,
};
