/**
 * The local OCR engines: `createOcrEngine` picks tesseract, PP-OCRv4 (ppocr.engine.ts) or both (ocr-ensemble.ts).
 *
 * The tesseract engine: tesseract.js with the bundled English LSTM model, fully offline, behind a pool of workers.
 *
 * Why these settings. Measured on the 2-core dev machine over a synthetic 1000×1400 receipt, a degraded copy of it
 * (rotated, 700 px, blurred, JPEG q45) and the 20 scanned receipts of sroie-dev, scoring how closely each truth field
 * (company, date, address, total) appears in the OCR text: "field CER" = summed best-substring edit distance ÷ field
 * characters, "exact" = fields found verbatim (of 80). Single settings were varied from the same base:
 * - Model: `4.0.0_best_int` and `4.0.0` (its LSTM, OEM 1) read identically (7.76 %, 58 exact), but best_int starts
 *   a worker in ~280 ms instead of ~360 ms and needs ~100 MB less, so best_int.
 * - Page segmentation: psm 6 (one uniform block) 7.85 %, 58 exact; psm 3 (auto) 8.18 %, 53; psm 4 7.90 %, 52;
 *   psm 11 (sparse) 9.49 %, 49 and 30 % CER on the synthetic receipt (reading order breaks). psm 6 also keeps a
 *   label and its amount on one line instead of splitting columns into blocks, which field extraction wants.
 * - Greyscale: same accuracy as colour, ~15 % faster (812 vs 973 ms per receipt). `normalise()` (contrast stretch)
 *   hurt faint thermal receipts badly (7.8 % → 10.9–14 %), so it is not used.
 * - Enlarging: a fixed upscale of narrow images did not help the receipts (7.57 % but 55 exact, 40 % slower), while
 *   text under ~10 px is misread (8/10 px fonts: 24 %/5 % CER; 0.6 %/0 % after ×3/×2). So the engine reads once
 *   and, only if the median word is under 10 px high, reads again enlarged to ~22 px and keeps the more confident
 *   result. No receipt triggers it.
 * - Size cap: long side 2500 px (the 4961×7016 scans took 2.0–2.5 s at full size, 1.1 s capped, same accuracy).
 * - Dark borders: one receipt with torn black edges gave *no text at all* under every psm and preprocessing; whitening
 *   large dark regions connected to the border fixed it and was neutral on the others (7.99 % → 4.30 %).
 * - `user_defined_dpi=300`: no change. PGM input instead of PNG: same text, no encode/decode cost.
 * Final configuration: field CER 3.41 %, 60/80 exact (company 16, date 19, address 6, total 19); psm 3 with the same
 * preprocessing gives 2.76 % but only 55 exact (date 16, total 17), so psm 6 stays. Speed: the synthetic receipt
 * reads in ~450–550 ms on a warm worker (~0.9 s for the first read, which starts the worker); a sroie receipt
 * ~0.8 s; two workers on two cores read 8 receipts 1.9× faster than one.
 */
import os from 'node:os';
import type { Logger } from '../../lib/logger';
import type { LayoutLine } from '../types';
import { createEnsembleEngine } from './ocr-ensemble';
import { createPpOcrEngine, type PpOcrEngineOptions } from './ppocr.engine';
import { preprocessForOcr, type PreprocessedImage } from './ocr-preprocess';
import { linesFromTesseract } from './tesseract-layout';
import { createTesseractWorker, defaultLangPath, type PageSegMode, type TesseractWorker } from './tesseract-worker';
import { currentTenant, currentWorkSignal } from '../../lib/work-tenant';
import { createWorkerPool } from './worker-pool';
import type { OcrEngine } from './ocr-engine.types';

export { defaultLangPath, type PageSegMode } from './tesseract-worker';
export type { OcrEngine, RecognizeOptions } from './ocr-engine.types';

/** Which OCR reads images: tesseract.js, PP-OCRv4 (onnxruntime), or both (see `ocr-ensemble.ts`). */
export type OcrEngineKind = 'tesseract' | 'ppocr' | 'ensemble';

export interface OcrEngineOptions {
  logger: Logger;
  /** Default `'tesseract'`; the app's default comes from `PRISM_OCR_ENGINE` (see the README for the trade-off). */
  engine?: OcrEngineKind;
  /** PP-OCR tuning (threads, detector size); only read when `engine` is `ppocr` or `ensemble`. */
  ppocr?: Omit<PpOcrEngineOptions, 'logger'>;
  /** Pool size (default `os.availableParallelism()`); each worker holds ~70 MB. */
  workers?: number;
  /** Default `'6'`: a single uniform block of text, best on receipts and forms (see the header). */
  pageSegMode?: PageSegMode;
  /** Longest side handed to tesseract before any small-text enlargement (default 2500). */
  maxDimension?: number;
  /** Median word height in pixels under which the page is read again enlarged (default 10; 0 disables). */
  smallTextHeight?: number;
  /** Folder holding `eng.traineddata.gz` (default: the `4.0.0_best_int` model of `@tesseract.js-data/eng`). */
  langPath?: string;
  /** Bound on starting a worker and on one read, in ms (default 120 000); the worker is then replaced. */
  timeoutMs?: number;
}

const SMALL_TEXT_TARGET = 22;
const MAX_ENLARGE = 3;

interface Reading {
  lines: LayoutLine[];
  width: number;
  height: number;
  scale: number;
}

/** Builds the chosen OCR engine; workers and models load on first use, so creating it is cheap. */
export function createOcrEngine(options: OcrEngineOptions): OcrEngine {
  const engine = options.engine ?? 'tesseract';
  if (engine === 'tesseract') return createTesseractEngine(options);
  const ppocr = createPpOcrEngine({ ...options.ppocr, logger: options.logger });
  return engine === 'ppocr' ? ppocr : createEnsembleEngine(ppocr, createTesseractEngine(options));
}

/** tesseract.js behind a worker pool (the settings in the header). */
export function createTesseractEngine(options: OcrEngineOptions): OcrEngine {
  const size = Math.max(1, options.workers ?? os.availableParallelism());
  const maxDimension = options.maxDimension ?? 2500;
  const smallText = options.smallTextHeight ?? 10;
  const workerOptions = {
    langPath: options.langPath ?? defaultLangPath(),
    pageSegMode: options.pageSegMode ?? '6',
    logger: options.logger,
    timeoutMs: options.timeoutMs ?? 120_000,
  } as const;

  const pool = createWorkerPool<TesseractWorker>({
    size,
    create: () => createTesseractWorker(workerOptions),
    destroy: (worker) => worker.terminate(),
  });

  /**
   * Preprocesses inside the pool task, so at most `size` decoded images are held at once however long the queue;
   * a bad image is returned, not thrown, so it does not cost the worker its place in the pool.
   */
  const read = async (image: Buffer, scale: number): Promise<Reading> => {
    const outcome = await pool.run(
      async (worker) => {
        let pre: PreprocessedImage;
        try {
          pre = await preprocessForOcr(image, { maxDimension, scale });
        } catch (error) {
          return { error };
        }
        return { pre, page: await worker.read(pre.pgm) };
      },
      currentTenant(),
      currentWorkSignal(),
    );
    if ('error' in outcome) throw outcome.error;
    const { pre, page } = outcome;
    const lines = linesFromTesseract(page, pre.scale);
    return { lines, width: pre.width, height: pre.height, scale: pre.scale };
  };

  return {
    workers: size,
    stats: () => ({ pending: pool.pending, reads: pool.ran, cancelled: pool.cancelled }),
    async recognize(image, opts = {}) {
      let result = await read(image, 1);
      const height = medianWordHeight(result.lines) * result.scale;
      if (smallText > 0 && height > 0 && height < smallText) {
        const second = await read(image, Math.min(MAX_ENLARGE, SMALL_TEXT_TARGET / height));
        if (meanWordConfidence(second.lines) > meanWordConfidence(result.lines)) result = second;
      }
      const { width, height: pageHeight, lines } = result;
      return { index: opts.index ?? 0, width, height: pageHeight, source: 'ocr', lines, status: 'ok' };
    },
    close: () => pool.close(),
  };
}

/** Median height of words of two or more characters (single marks are not representative), 0 if none. */
export function medianWordHeight(lines: LayoutLine[]): number {
  const heights = lines
    .flatMap((l) => l.words)
    .filter((w) => w.text.length >= 2)
    .map((w) => w.box.y1 - w.box.y0)
    .sort((a, b) => a - b);
  return heights[Math.floor(heights.length / 2)] ?? 0;
}

function meanWordConfidence(lines: LayoutLine[]): number {
  const words = lines.flatMap((l) => l.words);
  return words.reduce((sum, w) => sum + w.confidence, 0) / Math.max(1, words.length);
}
