/**
 * The OCR engine contract, apart from any engine: tesseract (ocr.engine.ts), PP-OCR (ppocr.engine.ts) and the
 * ensemble (ocr-ensemble.ts) implement it, and the factory in ocr.engine.ts builds them, so each engine imports
 * this file and never the factory.
 */
import type { LayoutPage } from '../types';

export interface RecognizeOptions {
  /** Page or frame index put on the result (default 0). */
  index?: number;
}

/** Reads text from images. Every method but `close` may be called concurrently; calls queue for free workers. */
export interface OcrEngine {
  /** OCRs one image (any format sharp accepts) into a layout page in the image's pixels, after EXIF orientation. */
  recognize(image: Buffer, opts?: RecognizeOptions): Promise<LayoutPage>;
  /** The pool size. */
  readonly workers: number;
  /** Waits for queued reads, then terminates every worker. */
  close(): Promise<void>;
}
