/**
 * Groups text segments into visual rows. A detector finds a receipt's "TOTAL" and its amount as two segments far
 * apart; field extraction reads a label and its value on one line (as tesseract's single-block mode returns them),
 * so segments whose vertical centres agree within half the smaller height, and which do not overlap horizontally,
 * become one line, words left to right.
 */
import type { LayoutLine, LayoutWord } from '../types';
import { lineFromWords, sortReadingOrder } from './layout-geometry';

/** A recognised segment: its words (already placed) and its reading confidence. */
export interface Segment {
  words: LayoutWord[];
  confidence: number;
}

interface Row {
  segments: Segment[];
  centre: number;
  height: number;
}

const box = (s: Segment): { x0: number; y0: number; x1: number; y1: number } => {
  const ws = s.words;
  return {
    x0: Math.min(...ws.map((w) => w.box.x0)),
    y0: Math.min(...ws.map((w) => w.box.y0)),
    x1: Math.max(...ws.map((w) => w.box.x1)),
    y1: Math.max(...ws.map((w) => w.box.y1)),
  };
};

/** Segments (any order) → lines in reading order. Segments without words are dropped. */
export function groupIntoRows(segments: Segment[]): LayoutLine[] {
  const usable = segments.filter((s) => s.words.length > 0);
  const sorted = usable
    .map((s) => ({ s, b: box(s) }))
    .sort((a, b) => (a.b.y0 + a.b.y1) / 2 - (b.b.y0 + b.b.y1) / 2 || a.b.x0 - b.b.x0);
  const rows: Row[] = [];
  for (const { s, b } of sorted) {
    const centre = (b.y0 + b.y1) / 2;
    const height = b.y1 - b.y0;
    let best: Row | undefined;
    let bestDistance = Infinity;
    for (const row of rows) {
      const distance = Math.abs(row.centre - centre);
      if (distance > 0.5 * Math.min(height, row.height) || distance >= bestDistance) continue;
      const overlaps = row.segments.some((other) => {
        const o = box(other);
        return Math.min(o.x1, b.x1) - Math.max(o.x0, b.x0) > 0.3 * Math.min(o.x1 - o.x0, b.x1 - b.x0);
      });
      if (overlaps) continue;
      best = row;
      bestDistance = distance;
    }
    if (best) {
      const n = best.segments.length;
      best.segments.push(s);
      best.centre = (best.centre * n + centre) / (n + 1);
      best.height = (best.height * n + height) / (n + 1);
    } else {
      rows.push({ segments: [s], centre, height });
    }
  }
  const lines = rows.map((row) => {
    const words = row.segments.flatMap((s) => s.words);
    const chars = row.segments.reduce((sum, s) => sum + s.words.reduce((n, w) => n + w.text.length, 0), 0);
    const weighted = row.segments.reduce(
      (sum, s) => sum + s.confidence * s.words.reduce((n, w) => n + w.text.length, 0),
      0,
    );
    return lineFromWords(words, chars > 0 ? weighted / chars : 0);
  });
  return sortReadingOrder(lines);
}
