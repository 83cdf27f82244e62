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
import sharp from 'sharp';
import { createWorker } from 'tesseract.js';
import type Tesseract from 'tesseract.js';
import { extractFromLayout } from '../src/engines/extract';
import { createLocalEngines } from '../src/engines/local/document-engines';
import type { OcrEngineKind } from '../src/engines/ocr/ocr.engine';
import { createLogger } from '../src/lib/logger';
import type { DocumentLayout, LayoutLine, LayoutPage, LayoutWord } from '../src/engines/types';

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

/** tesseract.js blocks → one LayoutPage (lines sorted top to bottom), boxes divided by `scale`. */
function toPage(page: Tesseract.Page, width: number, height: number, scale: number): LayoutPage {
  const box = (b: Tesseract.Bbox): LayoutWord['box'] => ({
    x0: Math.round(b.x0 / scale),
    y0: Math.round(b.y0 / scale),
    x1: Math.round(b.x1 / scale),
    y1: Math.round(b.y1 / scale),
  });
  const lines: LayoutLine[] = [];
  for (const block of page.blocks ?? []) {
    for (const paragraph of block.paragraphs) {
      for (const line of paragraph.lines) {
        const words = line.words
          .filter((w) => w.text.trim() !== '')
          .map((w) => ({ text: w.text, box: box(w.bbox), confidence: w.confidence / 100 }));
        if (words.length === 0) continue;
        lines.push({
          text: words.map((w) => w.text).join(' '),
          box: box(line.bbox),
          confidence: line.confidence / 100,
          words,
        });
      }
    }
  }
  lines.sort((a, b) => a.box.y0 - b.box.y0 || a.box.x0 - b.box.x0);
  return { index: 0, width, height, source: 'ocr', lines, status: 'ok' };
}

/**
 * Paints white the dark bands a scanner leaves past a receipt's torn top or bottom edge (rows more than 25 % dark),
 * together with the jagged rows right after them (more than 2 % dark). Images without such a band are unchanged.
 */
async function cropDarkBands(buf: Buffer, width: number, height: number): Promise<Buffer> {
  const { data } = await sharp(buf).greyscale().raw().toBuffer({ resolveWithObject: true });
  const dark = (y: number): number => {
    let n = 0;
    for (let x = 0; x < width; x += 1) if ((data[y * width + x] ?? 255) < 60) n += 1;
    return n / width;
  };
  const band = (rows: number[]): number => {
    let i = 0;
    while (i < rows.length && i < height * 0.15 && dark(rows[i] ?? 0) > 0.25) i += 1;
    if (i === 0) return 0;
    while (i < rows.length && i < height * 0.15 && dark(rows[i] ?? 0) > 0.02) i += 1;
    return i + 5;
  };
  const ys = Array.from({ length: height }, (_, y) => y);
  const top = band(ys);
  const bottom = band([...ys].reverse());
  if (top === 0 && bottom === 0) return buf;
  const white = (h: number, y: number): sharp.OverlayOptions => ({
    input: { create: { width, height: h, channels: 3, background: '#ffffff' } },
    top: y,
    left: 0,
  });
  const overlays = [...(top ? [white(top, 0)] : []), ...(bottom ? [white(bottom, height - bottom)] : [])];
  return sharp(buf).composite(overlays).png().toBuffer();
}

/** Applies a preprocessing variant; returns the bytes to OCR and how much they were enlarged. */
async function preprocess(
  buf: Buffer,
  variant: string,
): Promise<{ bytes: Buffer; scale: number; width: number; height: number }> {
  const meta = await sharp(buf).metadata();
  const width = meta.width ?? 0;
  const height = meta.height ?? 0;
  if (variant === 'none') return { bytes: buf, scale: 1, width, height };
  if (variant === 'crop') return { bytes: await cropDarkBands(buf, width, height), scale: 1, width, height };
  let img = sharp(buf).greyscale().normalise();
  let scale = 1;
  if (variant === 'up2' || variant === 'sharp') scale = width < 1800 ? Math.min(3, 1800 / width) : 1;
  if (variant === 'fit2000') scale = 2000 / width;
  if (scale !== 1) img = img.resize(Math.round(width * scale), Math.round(height * scale), { kernel: 'lanczos3' });
  if (variant === 'sharp') img = img.sharpen();
  return { bytes: await img.png().toBuffer(), scale, width, height };
}

type Ocr = { run: (file: string) => Promise<DocumentLayout>; close: () => Promise<void> };

async function directOcr(variant: string): Promise<Ocr> {
  const langPath = path.join(path.dirname(require.resolve('@tesseract.js-data/eng')), '4.0.0_best_int');
  const worker = await createWorker('eng', 1, { langPath, gzip: true, cacheMethod: 'none', errorHandler: () => {} });
  return {
    run: async (file) => {
      const pre = await preprocess(fs.readFileSync(file), variant);
      const { data } = await worker.recognize(pre.bytes, {}, { blocks: true });
      return { pages: [toPage(data, pre.width, pre.height, pre.scale)] };
    },
    close: async () => {
      await worker.terminate();
    },
  };
}

/** The service's own OCR path (`createLocalEngines().layoutFromImage`), so figures match what the server runs. */
async function engineOcr(engine: OcrEngineKind, ppocr: Args['ppocr']): Promise<Ocr> {
  const engines = createLocalEngines({ logger: createLogger('warn'), ocrWorkers: 2, ocr: { engine, ppocr } });
  return {
    run: (file) => engines.layoutFromImage(fs.readFileSync(file)),
    close: () => engines.close(),
  };
}

async function layoutsFor(args: Args, ids: string[]): Promise<Map<string, DocumentLayout>> {
  const dir = path.join(
    args.cache,
    args.ocr === 'engine'
      ? args.engine === 'tesseract'
        ? 'engine'
        : args.engine
      : args.pre === 'none'
        ? 'direct'
        : `direct-${args.pre}`,
  );
  fs.mkdirSync(dir, { recursive: true });
  const out = new Map<string, DocumentLayout>();
  let ocr: Ocr | undefined;
  const timings: number[] = [];
  const cpuTimes: number[] = [];
  try {
    for (const id of ids) {
      const cached = path.join(dir, `${id}.json`);
      if (!args.refresh && fs.existsSync(cached)) {
        out.set(id, JSON.parse(fs.readFileSync(cached, 'utf8')) as DocumentLayout);
        continue;
      }
      ocr ??= args.ocr === 'engine' ? await engineOcr(args.engine, args.ppocr) : await directOcr(args.pre);
      const started = Date.now();
      const cpu = process.cpuUsage();
      const layout = await ocr.run(path.join(args.data, 'images', `${id}.jpg`));
      const used = process.cpuUsage(cpu);
      const ms = Date.now() - started;
      const cpuMs = Math.round((used.user + used.system) / 1000);
      timings.push(ms);
      cpuTimes.push(cpuMs);
      console.error(`ocr ${id} ${ms} ms, CPU ${cpuMs} ms`);
      fs.writeFileSync(cached, JSON.stringify(layout));
      out.set(id, layout);
    }
  } finally {
    await ocr?.close();
  }
  if (timings.length > 0) {
    const sorted = [...timings].sort((a, b) => a - b);
    const cpuSorted = [...cpuTimes].sort((a, b) => a - b);
    const mean = Math.round(cpuTimes.reduce((a, b) => a + b, 0) / cpuTimes.length);
    console.error(
      `ocr p50 ${sorted[Math.ceil(sorted.length / 2) - 1]} ms wall, CPU p50 ${cpuSorted[Math.ceil(cpuSorted.length / 2) - 1]} ms mean ${mean} ms over ${sorted.length} reads`,
    );
  }
  return out;
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
