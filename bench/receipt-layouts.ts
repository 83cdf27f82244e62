/**
 * The OCR side of the receipts benches: reads SROIE receipt images through the service's own OCR path (or a bare
 * tesseract.js worker) and caches each layout as JSON, one folder per engine, so the extraction rules can be run
 * and scored again in milliseconds without reading any image twice.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { createWorker } from 'tesseract.js';
import type Tesseract from 'tesseract.js';
import { createLocalEngines } from '../src/engines/local/document-engines';
import type { OcrEngineKind } from '../src/engines/ocr/ocr.engine';
import type { PpOcrEngineOptions, RereadSettings, RereadVariant } from '../src/engines/ocr/ppocr.engine';
import { OCR_HEADS, type OcrHead } from '../src/engines/ocr/ppocr-head';
import { createLogger } from '../src/lib/logger';
import type { DocumentLayout, LayoutLine, LayoutPage, LayoutWord } from '../src/engines/types';

/** How layouts are read and where they are cached. */
export interface LayoutSource {
  /** Folder with images/<ID>.jpg. */
  data: string;
  cache: string;
  ocr: 'direct' | 'engine';
  engine: OcrEngineKind;
  pre: string;
  refresh: boolean;
  ppocr: Omit<PpOcrEngineOptions, 'logger'>;
  /** Appended to the cache folder's name, for settings of one engine that read differently (`-beam`). */
  variant?: string;
  /** When given, each fresh read's wall time (ms) is appended here. */
  timings?: number[];
}

/** A bench's `--reread below=0.9,variants=contrast+pad` flag (ppocr.engine.ts `reread`). */
export function parseReread(value: string): RereadSettings {
  const settings = new Map(
    value.split(',').map((pair): [string, string] => [pair.split('=')[0] ?? '', pair.split('=')[1] ?? '']),
  );
  return {
    below: Number(settings.get('below') ?? 0.9),
    variants: (settings.get('variants') ?? 'contrast+pad').split('+') as RereadVariant[],
  };
}

/** The cache folder suffix of a PP-OCR setting, so each reads into a folder of its own. */
export function layoutVariant(
  decoder: string | undefined,
  reread: RereadSettings | undefined,
  spaceThreshold?: number,
  spaceOnly = false,
  head: OcrHead = 'shipped',
): string {
  const space = spaceThreshold === undefined ? '' : `-space${spaceThreshold}`;
  const breaks = spaceOnly ? '-space-only' : '';
  const headPart = head === 'receipts' ? '-head-receipts' : '';
  const rereadPart = reread ? `-reread-${reread.below}-${reread.variants.join('+')}` : '';
  return `${decoder === 'beam' ? '-beam' : ''}${rereadPart}${space}${breaks}${headPart}`;
}

/** A bench's `--head`: which output layer PP-OCR's recogniser runs with (ppocr-head.ts). */
export function parseHead(value: string): OcrHead {
  if (!(OCR_HEADS as readonly string[]).includes(value)) throw new Error(`--head takes ${OCR_HEADS.join(' or ')}`);
  return value as OcrHead;
}

/** A bench's PP-OCR word-break setting: `--breaks space-only` reads words apart by the space class alone. */
export function parseBreaks(value: string): boolean {
  if (value !== 'space-only' && value !== 'gaps') throw new Error(`--breaks takes space-only or gaps, not ${value}`);
  return value === 'space-only';
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
async function engineOcr(engine: OcrEngineKind, ppocr: LayoutSource['ppocr']): Promise<Ocr> {
  const engines = createLocalEngines({ logger: createLogger('warn'), ocrWorkers: 2, ocr: { engine, ppocr } });
  return {
    run: (file) => engines.layoutFromImage(fs.readFileSync(file)),
    close: () => engines.close(),
  };
}

/** The layout of each receipt, from the cache when it holds one, else read (and cached). */
export async function layoutsFor(args: LayoutSource, ids: string[]): Promise<Map<string, DocumentLayout>> {
  const dir = path.join(
    args.cache,
    args.ocr === 'engine'
      ? args.engine === 'tesseract'
        ? 'engine'
        : `${args.engine}${args.variant ?? ''}`
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
      args.timings?.push(ms);
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
