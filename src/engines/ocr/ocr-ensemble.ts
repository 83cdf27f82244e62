/**
 * The `ensemble` OCR setting: PP-OCR and tesseract read the same image side by side, and the page is PP-OCR's, line
 * by line, except where tesseract read the same place with more confidence. PP-OCR's detector finds more of a
 * faint receipt and its recogniser slips less on digits; tesseract does better on some dense or stylised lines
 * (and on characters outside PP-OCR's alphabet). It costs both reads, so it is the accurate-but-slow setting.
 */
import type { LayoutLine, LayoutPage } from '../types';
import { sortReadingOrder } from './layout-geometry';
import type { OcrEngine } from './ocr-engine.types';

/** Lines PP-OCR read at or above this confidence are kept whatever tesseract says. */
const TRUSTED = 0.9;
/** A tesseract line is only added where PP-OCR found nothing when it reads at least this well. */
const ADDED = 0.85;

const height = (l: LayoutLine): number => l.box.y1 - l.box.y0;
const verticalOverlap = (a: LayoutLine, b: LayoutLine): number =>
  Math.max(0, Math.min(a.box.y1, b.box.y1) - Math.max(a.box.y0, b.box.y0)) /
  Math.max(1, Math.min(height(a), height(b)));
const horizontalOverlap = (a: LayoutLine, b: LayoutLine): number =>
  Math.max(0, Math.min(a.box.x1, b.box.x1) - Math.max(a.box.x0, b.box.x0)) /
  Math.max(1, Math.min(a.box.x1 - a.box.x0, b.box.x1 - b.box.x0));

/**
 * Merges two readings of one page: each `primary` line under `TRUSTED` confidence is replaced by the `secondary`
 * line covering the same place (≥ 60 % overlap both ways) when that one is more confident; `secondary` lines that
 * overlap no primary line are added when they read at least `ADDED`.
 */
export function mergeReadings(primary: LayoutLine[], secondary: LayoutLine[]): LayoutLine[] {
  const matches = (a: LayoutLine, b: LayoutLine): boolean =>
    verticalOverlap(a, b) >= 0.6 && horizontalOverlap(a, b) >= 0.6;
  const out = primary.map((line) => {
    if (line.confidence >= TRUSTED) return line;
    const rival = secondary.filter((s) => matches(line, s)).sort((a, b) => b.confidence - a.confidence)[0];
    return rival && rival.confidence > line.confidence ? rival : line;
  });
  const added = secondary.filter(
    (s) => s.confidence >= ADDED && !primary.some((p) => verticalOverlap(p, s) > 0.3 && horizontalOverlap(p, s) > 0),
  );
  return sortReadingOrder([...new Set([...out, ...added])]);
}

/** Reads with both engines (concurrently) and merges their lines (see `mergeReadings`). */
export function createEnsembleEngine(ppocr: OcrEngine, tesseract: OcrEngine): OcrEngine {
  return {
    workers: tesseract.workers,
    stats() {
      const [a, b] = [ppocr.stats(), tesseract.stats()];
      return { pending: a.pending + b.pending, reads: a.reads + b.reads, cancelled: a.cancelled + b.cancelled };
    },
    async recognize(image, opts = {}) {
      const [primary, secondary]: [LayoutPage, LayoutPage] = await Promise.all([
        ppocr.recognize(image, opts),
        tesseract.recognize(image, opts),
      ]);
      return { ...primary, lines: mergeReadings(primary.lines, secondary.lines) };
    },
    async close() {
      await Promise.all([ppocr.close(), tesseract.close()]);
    },
  };
}
