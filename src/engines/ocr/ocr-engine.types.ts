/**
 * The OCR engine contract, apart from any engine: tesseract (ocr.engine.ts), PP-OCR (ppocr.engine.ts) and the
 * ensemble (ocr-ensemble.ts) implement it, and the factory in ocr.engine.ts builds them, so each engine imports
 * this file and never the factory.
 */
import type { LayoutPage } from '../types';

/**
 * `recognize` reads its tenant and cancel signal from the work context (lib/work-tenant.ts): a read whose signal
 * aborts before it gets a worker rejects with `WorkCancelledError` and never runs.
 */
export interface RecognizeOptions {
  /** Page or frame index put on the result (default 0). */
  index?: number;
}

/** What the OCR pool has been doing, for operators and tests (counters since start, gauges now). */
export interface OcrStats {
  /** Reads waiting for a worker or running. */
  pending: number;
  /** Reads that got a worker and ran (a small-text page counts twice: it is read again enlarged). */
  reads: number;
  /** Reads dropped before they got a worker because nobody wanted their result any more. */
  cancelled: number;
}

/** Reads text from images. Every method but `close` may be called concurrently; calls queue for free workers. */
export interface OcrEngine {
  /** OCRs one image (any format sharp accepts) into a layout page in the image's pixels, after EXIF orientation. */
  recognize(image: Buffer, opts?: RecognizeOptions): Promise<LayoutPage>;
  /** The pool size. */
  readonly workers: number;
  /** The pool's counters (`reads`, `cancelled`) and how many reads are pending now. */
  stats(): OcrStats;
  /** Waits for queued reads, then terminates every worker. */
  close(): Promise<void>;
}
