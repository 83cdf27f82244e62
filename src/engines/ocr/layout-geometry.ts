/**
 * Box arithmetic and reading-order helpers shared by the OCR and PDF engines, so both produce layouts with the same
 * conventions: top-left origin, lines sorted top to bottom, words left to right.
 */
import type { Box, LayoutLine, LayoutWord } from '../types';

/** The smallest box containing every given box; a zero box when there are none. */
export function unionBox(boxes: readonly Box[]): Box {
  if (boxes.length === 0) return { x0: 0, y0: 0, x1: 0, y1: 0 };
  let { x0, y0, x1, y1 } = boxes[0] as Box;
  for (const b of boxes) {
    x0 = Math.min(x0, b.x0);
    y0 = Math.min(y0, b.y0);
    x1 = Math.max(x1, b.x1);
    y1 = Math.max(y1, b.y1);
  }
  return { x0, y0, x1, y1 };
}

/** Multiplies a box by `factor` and rounds to `digits` decimals (0 for whole pixels). */
export function scaleBox(box: Box, factor: number, digits = 0): Box {
  const round = (v: number): number => Number((v * factor).toFixed(digits));
  return { x0: round(box.x0), y0: round(box.y0), x1: round(box.x1), y1: round(box.y1) };
}

/** Builds a line from its words (sorted left to right); text is the words joined by single spaces. */
export function lineFromWords(words: LayoutWord[], confidence?: number): LayoutLine {
  const sorted = [...words].sort((a, b) => a.box.x0 - b.box.x0);
  const mean = sorted.reduce((sum, w) => sum + w.confidence, 0) / Math.max(1, sorted.length);
  return {
    text: sorted.map((w) => w.text).join(' '),
    box: unionBox(sorted.map((w) => w.box)),
    confidence: confidence ?? mean,
    words: sorted,
  };
}

/** Sorts lines into reading order: by vertical centre, then from the left. Stable for equal keys. */
export function sortReadingOrder(lines: LayoutLine[]): LayoutLine[] {
  const centre = (l: LayoutLine): number => (l.box.y0 + l.box.y1) / 2;
  return [...lines].sort((a, b) => centre(a) - centre(b) || a.box.x0 - b.box.x0);
}
