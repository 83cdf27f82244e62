/**
 * One tesseract.js worker configured for offline use, behind a narrow interface the OCR engine (and its tests) can
 * rely on. tesseract.js fetches language data from a CDN unless `langPath` is set, writes a cache into the working
 * directory unless `cacheMethod` is 'none', and crashes the process on a worker error unless an `errorHandler` is
 * given; all three are pinned here. A worker that stops answering (a lost worker thread, a language file that never
 * loads) would hang its caller forever, so creation and every read are bounded by a timeout; the pool then
 * terminates the worker and creates a fresh one.
 */
import path from 'node:path';
import { createWorker, OEM, PSM } from 'tesseract.js';
import type { Logger } from '../../lib/logger';
import type { TesseractPageLike } from './tesseract-layout';

/** Tesseract page segmentation modes Prism exposes: one block (default), auto layout, single column, sparse. */
export type PageSegMode = '3' | '4' | '6' | '11';

export interface TesseractWorker {
  /** Reads an encoded image (PNG, JPEG, PGM …) and returns tesseract's block hierarchy. */
  read(image: Buffer): Promise<TesseractPageLike>;
  terminate(): Promise<void>;
}

export interface TesseractWorkerOptions {
  langPath: string;
  pageSegMode: PageSegMode;
  logger: Logger;
  /** Bound on worker creation and on each read, in ms. */
  timeoutMs: number;
}

const PSM_BY_MODE: Record<PageSegMode, PSM> = {
  '3': PSM.AUTO,
  '4': PSM.SINGLE_COLUMN,
  '6': PSM.SINGLE_BLOCK,
  '11': PSM.SPARSE_TEXT,
};

/** The bundled LSTM-only English model; never fetched from the network. */
export function defaultLangPath(): string {
  return path.join(path.dirname(require.resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int');
}

export async function createTesseractWorker(options: TesseractWorkerOptions): Promise<TesseractWorker> {
  const { logger, timeoutMs } = options;
  const worker = await withTimeout(
    createWorker('eng', OEM.LSTM_ONLY, {
      langPath: options.langPath,
      gzip: true,
      cacheMethod: 'none',
      errorHandler: (error: unknown) => logger.warn('tesseract worker reported an error', { error: String(error) }),
    }),
    timeoutMs,
    'Starting an OCR worker timed out',
  );
  // debug_file keeps tesseract's own chatter ("Estimating resolution as …") off our stderr.
  await worker.setParameters({ tessedit_pageseg_mode: PSM_BY_MODE[options.pageSegMode], debug_file: '/dev/null' });
  return {
    async read(image) {
      const { data } = await withTimeout(
        worker.recognize(image, {}, { blocks: true, text: false }),
        timeoutMs,
        'OCR of an image timed out',
      );
      return { blocks: data.blocks ?? [] };
    },
    terminate: async () => void (await worker.terminate()),
  };
}

/** Rejects with `message` if `work` has not settled after `ms`; the timer never keeps the process alive. */
export function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
    timer.unref();
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
