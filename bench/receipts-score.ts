/**
 * Scores one OCR engine on a SROIE-style folder (images/<ID>.jpg, truth/<ID>.json) the way bench/receipts-dev.ts
 * does — the service's OCR path, `extractFromLayout` with the evaluator's schema, the evaluator's own `score` — but
 * without a cache and with the CPU time of each read, so the OCR benchmark can put both engines' speed and F1 side
 * by side in one run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { extractFromLayout } from '../src/engines/extract';
import { createOcrEngine, type OcrEngineKind, type OcrEngineOptions } from '../src/engines/ocr/ocr.engine';
import { createLogger } from '../src/lib/logger';

type Fields = Record<string, unknown>;
interface EvalModule {
  SCHEMA: Record<string, unknown>;
  score: (
    ids: string[],
    truths: Record<string, Fields>,
    records: Record<string, { prediction: Fields }>,
  ) => { micro: { f1: number }; fields: Record<string, { correct: number; n: number }> };
}

export interface ReceiptScore {
  receipts: number;
  f1: number;
  /** Correct values per field, e.g. `company 19/20`. */
  fields: string;
  cpuP50Ms: number;
  wallP50Ms: number;
}

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)] ?? 0;

/** The shared data folder beside the checkout, or `PRISM_TEST_SHARED_DIR` (a worktree elsewhere); undefined if absent. */
export function sharedDataDir(name: string): string | undefined {
  const root = process.env['PRISM_TEST_SHARED_DIR'] ?? path.resolve(__dirname, '../../shared');
  const dir = path.join(root, 'data', name);
  return fs.existsSync(path.join(dir, 'truth')) && fs.existsSync(path.join(root, 'tools/eval-receipts.mjs'))
    ? dir
    : undefined;
}

/** Reads every receipt of `dataDir` with `engine` (one worker, models loaded before the clock starts) and scores it. */
export async function scoreReceipts(
  dataDir: string,
  engine: OcrEngineKind,
  options: Omit<OcrEngineOptions, 'logger' | 'engine'> = {},
): Promise<ReceiptScore> {
  const evalPath = path.resolve(dataDir, '../../tools/eval-receipts.mjs');
  const ev = (await import(pathToFileURL(evalPath).href)) as EvalModule;
  const ids = fs
    .readdirSync(path.join(dataDir, 'truth'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -5))
    .sort();
  const truths: Record<string, Fields> = {};
  const records: Record<string, { prediction: Fields }> = {};
  const ocr = createOcrEngine({ logger: createLogger('silent'), workers: 1, ...options, engine });
  const cpu: number[] = [];
  const wall: number[] = [];
  try {
    for (const [i, id] of ids.entries()) {
      truths[id] = JSON.parse(fs.readFileSync(path.join(dataDir, 'truth', `${id}.json`), 'utf8')) as Fields;
      const image = fs.readFileSync(path.join(dataDir, 'images', `${id}.jpg`));
      // The first read also loads the models; it is read twice so every timed read is a warm one.
      if (i === 0) await ocr.recognize(image);
      const started = performance.now();
      const before = process.cpuUsage();
      const page = await ocr.recognize(image);
      const used = process.cpuUsage(before);
      wall.push(performance.now() - started);
      cpu.push((used.user + used.system) / 1000);
      records[id] = { prediction: extractFromLayout({ pages: [page] }, ev.SCHEMA).data };
    }
  } finally {
    await ocr.close();
  }
  const report = ev.score(ids, truths, records);
  return {
    receipts: ids.length,
    f1: report.micro.f1,
    fields: Object.entries(report.fields)
      .map(([name, f]) => `${name} ${f.correct}/${f.n}`)
      .join(', '),
    cpuP50Ms: median(cpu),
    wallP50Ms: median(wall),
  };
}
