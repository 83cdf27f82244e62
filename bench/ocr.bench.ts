/**
 * OCR benchmarks: the cost of Prism's OCR path (sharp preprocessing, tesseract with block output, layout mapping)
 * against a bare tesseract.js worker reading the same receipt, and the throughput gain of a two-worker pool over a
 * single worker on a batch of receipts (ratio < 1 means the pool is faster; speed-up = 1 / ratio), and the two OCR
 * engines side by side on the same receipt, one core each. The notes give, per engine, the CPU time of one read of
 * the 1000×1400 receipt (process.cpuUsage, all threads: steadier than wall time on a shared machine; the target is
 * 0.8 s for the default engine) and, when the shared sroie-dev folder is there, the micro-F1 each engine gives on it
 * with its CPU p50 per receipt (bench/receipts-score.ts).
 */
import { createWorker, OEM, PSM } from 'tesseract.js';
import { createOcrEngine, defaultLangPath } from '../src/engines/ocr/ocr.engine';
import { createLogger } from '../src/lib/logger';
import { renderReceiptImage } from '../test/helpers/media-fixtures';
import type { BenchCase } from './harness';
import { scoreReceipts, sharedDataDir } from './receipts-score';

const BATCH = 8;

const CPU_READS = 7;

/** Median CPU milliseconds (all threads of this process) of `reads` calls of `run`, after one warm-up call. */
async function cpuMedian(run: () => Promise<void>, reads = CPU_READS): Promise<number> {
  await run();
  const times: number[] = [];
  for (let i = 0; i < reads; i += 1) {
    const before = process.cpuUsage();
    await run();
    const used = process.cpuUsage(before);
    times.push((used.user + used.system) / 1000);
  }
  return [...times].sort((a, b) => a - b)[Math.floor(reads / 2)] ?? 0;
}

export async function ocrBenchmarks(): Promise<{
  cases: BenchCase[];
  notes: () => Promise<string[]>;
  close: () => Promise<void>;
}> {
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
  const notes = async (): Promise<string[]> => {
    const tesseractCpu = await cpuMedian(async () => void (await one.recognize(receipt)));
    const ppocrCpu = await cpuMedian(async () => void (await ppocr.recognize(receipt)));
    const out = [
      `OCR of the 1000x1400 receipt, CPU per read (median of ${CPU_READS}, one core each): ` +
        `tesseract ${tesseractCpu.toFixed(0)} ms, ppocr ${ppocrCpu.toFixed(0)} ms (default engine; target <= 800 ms)`,
    ];
    const dev = sharedDataDir('sroie-dev');
    if (!dev) return [...out, 'dev-set F1: skipped (no shared sroie-dev folder; set PRISM_TEST_SHARED_DIR)'];
    for (const engine of ['tesseract', 'ppocr'] as const) {
      const s = await scoreReceipts(dev, engine, engine === 'ppocr' ? { ppocr: { threads: 1 } } : {});
      out.push(
        `sroie-dev (${s.receipts} receipts), ${engine}: micro-F1 ${s.f1.toFixed(3)} (${s.fields}); ` +
          `CPU p50 ${s.cpuP50Ms.toFixed(0)} ms, wall p50 ${s.wallP50Ms.toFixed(0)} ms per receipt`,
      );
    }
    return out;
  };
  return {
    cases,
    notes,
    close: async () => {
      await Promise.all([one.close(), two.close(), ppocr.close(), bare.terminate()]);
    },
  };
}
