/**
 * The reader bench: how well each OCR engine setting reads the SROIE development receipts, against the dataset's
 * line-level text truth (`ocr-truth/<ID>.csv`), apart from any field rule. Prints one table row per setting and
 * folder (word precision / recall / F1, line detection recall, CER per found line; see reader-metrics.ts), each
 * setting's read time per receipt and, for PP-OCR, the CPU time of CTC decoding per receipt.
 *
 *   npm run bench -- reader          # ppocr greedy, ppocr beam and tesseract on sroie-dev and sroie-dev2
 *   npx tsx bench/reader.ts [--engines ppocr,tesseract,ensemble] [--decoders greedy,beam] [--limit N]
 *                           [--beam beamWidth=8,lmWeight=0.3,...] [--reread below=0.9,variants=contrast+pad] [--space P] [--breaks space-only]
 *                           [--refresh] [--cache DIR]
 *
 * `--decoders` are PP-OCR's CTC decoders (ppocr.engine.ts `decoder`), each a setting of its own for `ppocr` and
 * `ensemble`; `--limit N` scores the first N receipts of each folder (by ID), for quick runs while developing;
 * `--beam` overrides the beam search's settings (ctc-beam.ts) and reads the images again (nothing is cached).
 * `--reread` reads the crops under a confidence again in each variant (ppocr.engine.ts `reread`), cached apart;
 * `--space P` sets greedy decoding's space threshold (ppocr.engine.ts `spaceThreshold`, default 0.1), cached apart;
 * `--breaks space-only` reads words apart by the space class alone, without the gap rules of ctc-word-breaks.ts.
 *
 * Layouts are read through the service's own OCR path (`createLocalEngines().layoutFromImage`) and cached as JSON
 * per setting under `--cache` (default /tmp/sroie-reader); `--refresh` reads every image again (needed after a change
 * to the reader). The truth is only ever read here, never by the reader.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { BeamSettings } from '../src/engines/ocr/ctc-beam';
import type { OcrEngineKind } from '../src/engines/ocr/ocr.engine';
import type { OcrDecoder, RereadSettings } from '../src/engines/ocr/ppocr.engine';
import type { OcrHead } from '../src/engines/ocr/ppocr-head';
import { layoutsFor, layoutVariant, parseBreaks, parseHead, parseReread } from './receipt-layouts';
import { SPACE_PROBABILITY_ONLY } from '../src/engines/ocr/ctc-word-breaks';
import { addCounts, NO_COUNTS, parseTruthCsv, readerFigures, scoreReading, type ReaderCounts } from './reader-metrics';

interface Args {
  engines: OcrEngineKind[];
  decoders: OcrDecoder[];
  cache: string;
  refresh: boolean;
  limit: number;
  beam: Partial<BeamSettings>;
  reread?: RereadSettings;
  /** Greedy decoding's space threshold (ppocr.engine.ts `spaceThreshold`). */
  space?: number;
  /** `--breaks space-only`: words apart by the space class alone, as before the gap rules (ctc-word-breaks.ts). */
  spaceOnly?: boolean;
  /** `--head receipts`: the recogniser's output layer refitted on receipt lines (ppocr-head.ts). */
  head: OcrHead;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    engines: ['ppocr', 'tesseract'],
    decoders: ['greedy', 'beam'],
    cache: '/tmp/sroie-reader',
    refresh: false,
    limit: 0,
    beam: {},
    head: 'shipped',
  };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    const value = (): string => argv[++i] ?? '';
    if (flag === '--engines') args.engines = value().split(',') as OcrEngineKind[];
    else if (flag === '--decoders') args.decoders = value().split(',') as OcrDecoder[];
    else if (flag === '--cache') args.cache = path.resolve(value());
    else if (flag === '--refresh') args.refresh = true;
    else if (flag === '--limit') args.limit = Number(value());
    else if (flag === '--beam') {
      for (const pair of value().split(',').filter(Boolean)) {
        const [key = '', raw = ''] = pair.split('=');
        if (key === 'guarded') args.beam.guarded = raw === 'true';
        else args.beam[key as Exclude<keyof BeamSettings, 'guarded'>] = Number(raw);
      }
    } else if (flag === '--reread') args.reread = parseReread(value());
    else if (flag === '--space') args.space = Number(value());
    else if (flag === '--breaks') args.spaceOnly = parseBreaks(value());
    else if (flag === '--head') args.head = parseHead(value());
    else throw new Error(`unknown argument ${flag ?? ''}`);
  }
  return args;
}

interface Setting {
  engine: OcrEngineKind;
  decoder?: OcrDecoder;
}

/** Each engine, and each decoder of the engines that read with PP-OCR. */
function settingsOf(args: Args): Setting[] {
  return args.engines.flatMap((engine): Setting[] =>
    engine === 'tesseract' ? [{ engine }] : args.decoders.map((decoder) => ({ engine, decoder })),
  );
}

const mean = (values: number[]): string =>
  values.length > 0 ? (values.reduce((a, b) => a + b, 0) / values.length).toFixed(1) : 'cached';

/** The SROIE folders that hold images and OCR truth, beside the checkout or under PRISM_TEST_SHARED_DIR. */
function readerFolders(): string[] {
  const root = process.env['PRISM_TEST_SHARED_DIR'] ?? path.resolve(__dirname, '../../shared');
  return ['sroie-dev', 'sroie-dev2']
    .map((name) => path.join(root, 'data', name))
    .filter((dir) => fs.existsSync(path.join(dir, 'ocr-truth')) && fs.existsSync(path.join(dir, 'images')));
}

const pct = (v: number): string => v.toFixed(3);

/** The table rows for each engine setting and folder, plus the all-receipts row. */
export async function readerTable(args: Args): Promise<string[]> {
  const folders = readerFolders();
  if (folders.length === 0) return ['reader: skipped, no SROIE folder with ocr-truth/ (set PRISM_TEST_SHARED_DIR)'];
  const rows = [
    '| setting | folder | receipts | word P | word R | word F1 | line recall | CER (found lines) | read ms p50 | decode ms/receipt |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const tuned = Object.keys(args.beam).length > 0;
  const { reread } = args;
  for (const { engine, decoder } of settingsOf(args)) {
    const rereadName =
      (reread && decoder ? `, reread < ${reread.below} (${reread.variants.join(', ')})` : '') +
      (args.space === undefined ? '' : `, space ≥ ${args.space}`) +
      (args.spaceOnly && decoder ? ', words by the space class only' : '') +
      (args.head === 'receipts' && decoder ? ', receipt head' : '');
    const name = decoder ? `${engine}, ${decoder}${rereadName}` : engine;
    let all: ReaderCounts = NO_COUNTS;
    let receipts = 0;
    const times: number[] = [];
    const decodeTimings: number[] = [];
    for (const dir of folders) {
      const ids = fs
        .readdirSync(path.join(dir, 'ocr-truth'))
        .filter((f) => f.endsWith('.csv'))
        .map((f) => f.slice(0, -4))
        .sort()
        .slice(0, args.limit > 0 ? args.limit : undefined);
      const layouts = await layoutsFor(
        {
          data: dir,
          cache: path.join(args.cache, path.basename(dir)),
          ocr: 'engine',
          engine,
          pre: 'none',
          refresh: args.refresh || (tuned && decoder === 'beam'),
          ppocr: decoder
            ? {
                decoder,
                beam: args.beam,
                decodeTimings,
                ...(reread ? { reread } : {}),
                ...(args.space === undefined ? {} : { spaceThreshold: args.space }),
                ...(args.spaceOnly ? { wordBreaks: SPACE_PROBABILITY_ONLY } : {}),
                head: args.head,
              }
            : {},
          variant: layoutVariant(decoder, reread, args.space, args.spaceOnly, args.head),
          timings: times,
        },
        ids,
      );
      let counts: ReaderCounts = NO_COUNTS;
      for (const id of ids) {
        const truth = parseTruthCsv(fs.readFileSync(path.join(dir, 'ocr-truth', `${id}.csv`), 'utf8'));
        const layout = layouts.get(id);
        if (layout) counts = addCounts(counts, scoreReading(truth, layout));
      }
      all = addCounts(all, counts);
      receipts += ids.length;
      const f = readerFigures(counts);
      rows.push(
        `| ${name} | ${path.basename(dir)} | ${ids.length} | ${pct(f.precision)} | ${pct(f.recall)} | ${pct(f.f1)} | ${pct(f.lineRecall)} | ${pct(f.cer)} | | |`,
      );
    }
    const f = readerFigures(all);
    const sorted = [...times].sort((a, b) => a - b);
    const p50 = sorted.length > 0 ? String(sorted[Math.ceil(sorted.length / 2) - 1]) : 'cached';
    rows.push(
      `| **${name}** | **all** | ${receipts} | ${pct(f.precision)} | ${pct(f.recall)} | **${pct(f.f1)}** | ${pct(f.lineRecall)} | ${pct(f.cer)} | ${p50} | ${decoder ? mean(decodeTimings) : ''} |`,
    );
  }
  return rows;
}

/** `npm run bench -- reader`. */
export async function readerBenchmarks(): Promise<string[]> {
  return ['reader (word F1 against SROIE line-level text truth):', ...(await readerTable(parseArgs([])))];
}

if (require.main === module) {
  readerTable(parseArgs(process.argv.slice(2)))
    .then((rows) => console.log(rows.join('\n')))
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
}
