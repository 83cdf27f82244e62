/**
 * OCR benchmarks: the cost of Prism's OCR path (sharp preprocessing, tesseract with block output, layout mapping)
 * against a bare tesseract.js worker reading the same receipt, and the throughput gain of a two-worker pool over a
 * single worker on a batch of receipts (ratio < 1 means the pool is faster; speed-up = 1 / ratio), and the two OCR
 * engines side by side on the same receipt, one core each (their dev-set F1 is in the README: bench/receipts-dev.ts).
 */
import { createWorker, OEM, PSM } from 'tesseract.js';
import { createOcrEngine, defaultLangPath } from '../src/engines/ocr/ocr.engine';
import { createLogger } from '../src/lib/logger';
import { renderReceiptImage } from '../test/helpers/media-fixtures';
import type { BenchCase } from './harness';

const BATCH = 8;

export async function ocrBenchmarks(): Promise<{ cases: BenchCase[]; close: () => Promise<void> }> {
  const logger = createLogger('silent');
  const receipt = renderReceiptImage();
  const one = createOcrEngine({ logger, workers: 1 });
  // One core each: tesseract with one worker, PP-OCR with one onnxruntime thread.
  const ppocr = createOcrEngine({ logger, engine: 'ppocr', ppocr: { threads: 1 } });
  const two = createOcrEngine({ logger, workers: 2 });
  const bare = await createWorker('eng', OEM.LSTM_ONLY, {
    langPath: defaultLangPath(),
    gzip: true,
    cacheMethod: 'none',
    errorHandler: () => undefined,
  });
  await bare.setParameters({ tessedit_pageseg_mode: PSM.SINGLE_BLOCK, debug_file: '/dev/null' });

  const batch = (engine: typeof one) => async () =>
    void (await Promise.all(Array.from({ length: BATCH }, (_, index) => engine.recognize(receipt, { index }))));

  const cases: BenchCase[] = [
    {
      name: 'OCR one 1000x1400 receipt',
      iterations: 9,
      warmup: 2,
      baseline: {
        name: 'bare tesseract.js recognize (text only)',
        run: async () => void (await bare.recognize(receipt)),
      },
      subject: { name: 'ocr.recognize → LayoutPage', run: async () => void (await one.recognize(receipt)) },
    },
    {
      name: 'OCR one 1000x1400 receipt on one core, tesseract vs PP-OCRv4',
      iterations: 5,
      warmup: 1,
      baseline: { name: 'tesseract (1 worker)', run: async () => void (await one.recognize(receipt)) },
      subject: { name: 'ppocr (1 thread)', run: async () => void (await ppocr.recognize(receipt)) },
    },
    {
      name: `OCR ${BATCH} receipts, pool of 2 vs 1 worker`,
      iterations: 5,
      warmup: 1,
      baseline: { name: '1 worker', run: batch(one) },
      subject: { name: '2 workers', run: batch(two) },
    },
  ];
  return {
    cases,
    close: async () => {
      await Promise.all([one.close(), two.close(), ppocr.close(), bare.terminate()]);
    },
  };
}
