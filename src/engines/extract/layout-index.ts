/**
 * A reading-order index over a {@link DocumentLayout}: lines of every usable page merged into visual rows (OCR often
 * splits one printed row into a left and a right block, e.g. `TOTAL` and `29.80`), each row with its words, their
 * character offsets in the row text, and the geometry the finders use for "right of" and "below".
 */
import type { Box, DocumentLayout, LayoutLine, LayoutWord } from '../types';

/** A word of a row, with its offsets in {@link Row.text}. */
export interface RowWord {
  text: string;
  box: Box;
  confidence: number;
  start: number;
  end: number;
}

/** One visual row of a page, words left to right. */
export interface Row {
  page: number;
  /** Position in {@link LayoutIndex.rows}. */
  index: number;
  text: string;
  words: RowWord[];
  box: Box;
  confidence: number;
}

export interface LayoutIndex {
  /** Visual rows: same-height lines merged, top to bottom. */
  rows: Row[];
  /** The layout's own lines, top to bottom then left to right (columns kept apart), for header analysis. */
  lines: Row[];
  /** Median row height, the unit for "near" and "large". */
  rowHeight: number;
  pageHeights: Map<number, number>;
}

const height = (b: Box): number => Math.max(1, b.y1 - b.y0);

export const unionBox = (boxes: Box[]): Box => ({
  x0: Math.min(...boxes.map((b) => b.x0)),
  y0: Math.min(...boxes.map((b) => b.y0)),
  x1: Math.max(...boxes.map((b) => b.x1)),
  y1: Math.max(...boxes.map((b) => b.y1)),
});

function wordsOf(line: LayoutLine): LayoutWord[] {
  const words = line.words.filter((w) => w.text.trim() !== '');
  if (words.length > 0) return words;
  return line.text.trim() === '' ? [] : [{ text: line.text.trim(), box: line.box, confidence: line.confidence }];
}

/** True when `b` sits on the same printed row as `a` and beside it rather than over it. */
function sameRow(a: Box, b: Box): boolean {
  const overlap = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
  const xOverlap = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0);
  const narrower = Math.min(a.x1 - a.x0, b.x1 - b.x0);
  return overlap >= 0.6 * Math.min(height(a), height(b)) && xOverlap < 0.2 * Math.max(1, narrower);
}

function buildRow(page: number, lines: LayoutLine[]): Omit<Row, 'index'> {
  const words = lines.flatMap(wordsOf).sort((a, b) => a.box.x0 - b.box.x0);
  let text = '';
  const rowWords: RowWord[] = words.map((w) => {
    if (text) text += ' ';
    const start = text.length;
    text += w.text.trim();
    return { text: w.text.trim(), box: w.box, confidence: w.confidence, start, end: text.length };
  });
  const confidence = rowWords.reduce((s, w) => s + w.confidence, 0) / Math.max(1, rowWords.length);
  return { page, text, words: rowWords, box: unionBox(lines.map((l) => l.box)), confidence };
}

/** Builds the row index of every page whose status is `ok`. */
export function createLayoutIndex(layout: DocumentLayout): LayoutIndex {
  const rows: Row[] = [];
  const segments: Row[] = [];
  const pageHeights = new Map<number, number>();
  for (const page of layout.pages) {
    if (page.status !== 'ok') continue;
    pageHeights.set(page.index, page.height);
    const lines = page.lines
      .filter((l) => wordsOf(l).length > 0)
      .sort((a, b) => (a.box.y0 + a.box.y1) / 2 - (b.box.y0 + b.box.y1) / 2);
    const groups: { box: Box; lines: LayoutLine[] }[] = [];
    for (const line of lines) {
      const group = groups.slice(-3).find((g) => g.lines.every((l) => sameRow(l.box, line.box)));
      if (group) {
        group.lines.push(line);
        group.box = unionBox([group.box, line.box]);
      } else groups.push({ box: line.box, lines: [line] });
    }
    for (const g of groups) {
      rows.push({ ...buildRow(page.index, g.lines), index: rows.length });
      for (const line of [...g.lines].sort((a, b) => a.box.x0 - b.box.x0)) {
        segments.push({ ...buildRow(page.index, [line]), index: segments.length });
      }
    }
  }
  const heights = rows.map((r) => height(r.box)).sort((a, b) => a - b);
  return { rows, lines: segments, rowHeight: heights[Math.floor(heights.length / 2)] ?? 10, pageHeights };
}

/** The words of `row` overlapping characters `[start, end)`, with their box and mean confidence. */
export function span(row: Row, start: number, end: number): { box: Box; confidence: number; words: RowWord[] } {
  const words = row.words.filter((w) => w.start < end && w.end > start);
  const used = words.length > 0 ? words : row.words;
  return {
    box: used.length > 0 ? unionBox(used.map((w) => w.box)) : row.box,
    confidence: used.reduce((s, w) => s + w.confidence, 0) / Math.max(1, used.length),
    words: used,
  };
}
