/**
 * Turns tesseract.js's `blocks` output (blocks → paragraphs → lines → words, 0–100 confidences) into layout lines
 * in the coordinates of the caller's image, so the rest of Prism never sees tesseract's shapes.
 */
import type { LayoutLine, LayoutWord } from '../types';
import { lineFromWords, scaleBox, sortReadingOrder } from './layout-geometry';

interface TesseractWordLike {
  text: string;
  confidence: number;
  bbox: { x0: number; y0: number; x1: number; y1: number };
}

/** The part of tesseract.js's `Page` this module reads (structural, so tests can build it by hand). */
export interface TesseractPageLike {
  blocks: { paragraphs: { lines: { confidence: number; words: TesseractWordLike[] }[] }[] }[];
}

const clamp01 = (v: number): number => Math.min(1, Math.max(0, v / 100));

/**
 * Flattens tesseract's hierarchy into lines in reading order. `scale` is how much the recognised image was enlarged
 * relative to the caller's (boxes are divided by it). Empty words and lines are dropped.
 */
export function linesFromTesseract(page: TesseractPageLike, scale = 1): LayoutLine[] {
  const lines: LayoutLine[] = [];
  for (const block of page.blocks) {
    for (const paragraph of block.paragraphs) {
      for (const line of paragraph.lines) {
        const words: LayoutWord[] = [];
        for (const word of line.words) {
          const text = word.text.trim();
          if (text === '') continue;
          words.push({ text, box: scaleBox(word.bbox, 1 / scale), confidence: clamp01(word.confidence) });
        }
        if (words.length > 0) lines.push(lineFromWords(words, clamp01(line.confidence)));
      }
    }
  }
  return sortReadingOrder(lines);
}
