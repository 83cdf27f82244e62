/**
 * Development loop for the schema-guided extractor on the SROIE receipt set: OCR each receipt once (layouts are
 * cached as JSON), run `extractFromLayout` with the evaluator's own schema, and score with the evaluator's exported
 * functions, so what we measure here is what `shared/tools/eval-receipts.mjs` would measure against the server.
 *
 *   npx tsx bench/receipts-dev.ts [--data DIR] [--cache DIR] [--ocr direct|engine] [--engine KIND] [--pre VARIANT]
 *                                 [--refresh] [--only ID,ID] [--split odd|even] [--dump]
 *
 * `--ocr engine` (default) reads each image through the service's own path (`createLocalEngines().layoutFromImage`),
 * so the figures match what the server runs, with `--engine tesseract|ppocr|ensemble` choosing the OCR engine (default
 * tesseract; layouts are cached per engine); `--ocr direct` runs tesseract.js here (psm 3, no preprocessing), with
 * `--pre` to measure what an image preparation does: `none` (default), `gray` (greyscale + contrast stretch), `up2`
 * (greyscale, small images enlarged to ≥ 1800 px wide), `fit2000` (greyscale, scaled to 2000 px wide), `sharp`
 * (up2 + unsharp mask), `crop` (dark scanner bands past a torn edge painted white, nothing else).
 * `--ppocr key=value,...` passes PP-OCR engine options (detectionMaxSide, maxDimension, batchSize, batchWidthRatio,
 * threads, spinning) to measure a speed setting; each read's wall and CPU time (process.cpuUsage, all threads) is
 * printed. `--dump` prints each receipt's OCR lines before its fields. `--split odd|even` keeps the receipts whose number (the
 * digits of the ID) is odd or even: tune rules on one half and check them on the other. OCR output is cached per
 * engine under `--cache` (default /tmp/sroie-layouts); point `--cache` at a new folder when the engine changes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { extractFromLayout } from '../src/engines/extract';
import type { OcrEngineKind } from '../src/engines/ocr/ocr.engine';
import { layoutsFor } from './receipt-layouts';

type Fields = Record<string, unknown>;
interface ScoreReport {
  summary: string;
  fields: Record<string, { correct: number; n: number; accuracy: number; non_empty: number }>;
  micro: { precision: number; recall: number; f1: number; correct: number; non_empty: number; total: number };
  receipts: { id: string; fields: Record<string, { pred: unknown; truth: string; ok: boolean }> }[];
}
interface EvalModule {
  SCHEMA: Record<string, unknown>;
  FIELDS: string[];
  score: (
    ids: string[],
    truths: Record<string, Fields>,
    records: Record<string, { prediction: Fields }>,
  ) => ScoreReport;
  formatReport: (report: ScoreReport, header: string) => string[];
}

interface Args {
  data: string;
  cache: string;
  ocr: 'direct' | 'engine';
  engine: OcrEngineKind;
  pre: string;
  refresh: boolean;
  only: string[];
  split: 'all' | 'odd' | 'even';
  ppocr: Record<string, number | boolean>;
  dump: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    data: path.resolve(__dirname, '../../shared/data/sroie-dev'),
    cache: '/tmp/sroie-layouts',
    ocr: 'engine',
    engine: 'tesseract',
    pre: 'none',
    refresh: false,
    only: [],
    split: 'all',
    ppocr: {},
    dump: false,
  };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    const value = (): string => argv[++i] ?? '';
    if (flag === '--data') args.data = path.resolve(value());
    else if (flag === '--cache') args.cache = path.resolve(value());
    else if (flag === '--ocr') args.ocr = value() === 'direct' ? 'direct' : 'engine';
    else if (flag === '--pre') args.pre = value();
    else if (flag === '--engine') args.engine = value() as OcrEngineKind;
    else if (flag === '--refresh') args.refresh = true;
    else if (flag === '--dump') args.dump = true;
    else if (flag === '--only') args.only = value().split(',').filter(Boolean);
    else if (flag === '--ppocr') {
      for (const pair of value().split(',').filter(Boolean)) {
        const [key = '', raw = ''] = pair.split('=');
        args.ppocr[key] = raw === 'true' ? true : raw === 'false' ? false : Number(raw);
      }
    } else if (flag === '--split') args.split = value() === 'odd' ? 'odd' : 'even';
    else throw new Error(`unknown argument ${flag ?? ''}`);
  }
  return args;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const evalPath = path.resolve(args.data, '../../tools/eval-receipts.mjs');
  const ev = (await import(pathToFileURL(evalPath).href)) as EvalModule;
  const ids = fs
    .readdirSync(path.join(args.data, 'truth'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -5))
    .filter((id) => args.only.length === 0 || args.only.includes(id))
    .filter(
      (id) => args.split === 'all' || Number(id.replace(/\D/g, '').slice(-6)) % 2 === (args.split === 'odd' ? 1 : 0),
    )
    .sort();
  const truths = Object.fromEntries(
    ids.map((id) => [id, JSON.parse(fs.readFileSync(path.join(args.data, 'truth', `${id}.json`), 'utf8')) as Fields]),
  );
  const layouts = await layoutsFor(args, ids);
  const records: Record<string, { prediction: Fields }> = {};
  for (const id of ids) {
    const layout = layouts.get(id);
    if (!layout) continue;
    if (args.dump) {
      console.log(`\n=== ${id}`);
      for (const line of layout.pages[0]?.lines ?? []) {
        const b = line.box;
        console.log(`  [${b.x0},${b.y0},${b.x1},${b.y1}] ${line.confidence.toFixed(2)} ${line.text}`);
      }
    }
    const result = extractFromLayout(layout, ev.SCHEMA, { confidence: true, grounding: true });
    records[id] = { prediction: result.data };
    if (args.dump) console.log(JSON.stringify(result.data), JSON.stringify(result.confidence));
  }
  const report = ev.score(ids, truths, records);
  console.log('wrong fields:');
  for (const receipt of report.receipts) {
    for (const [field, r] of Object.entries(receipt.fields)) {
      if (!r.ok) {
        console.log(
          `  ${receipt.id} ${field.padEnd(8)} pred ${JSON.stringify(r.pred)} | truth ${JSON.stringify(r.truth)}`,
        );
      }
    }
  }
  const label =
    (args.ocr === 'engine' ? `engine ${args.engine}` : `direct, preprocessing ${args.pre}`) +
    (args.split === 'all' ? '' : `, ${args.split} half`);
  const lines = ev.formatReport(report, `receipts-dev: ${ids.length} receipts, OCR ${label}`);
  for (const field of ev.FIELDS) {
    const f = report.fields[field];
    if (f) lines.push(`${field.padEnd(10)} non-empty ${f.non_empty}/${f.n}`);
  }
  console.log([...lines, report.summary].join('\n'));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
