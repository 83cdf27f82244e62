/**
 * PP-OCR text recognition (SVTR-LCNet + CTC): each detected box is cut from the page, scaled to 48 px high, and read
 * in batches of similar width (less padding, fewer wasted columns); the CTC output is decoded greedily into text, a
 * confidence (mean probability of the kept characters) and word boxes placed from the time steps each character
 * came from.
 */
import type { Box, LayoutWord } from '../types';
import { breaksBefore, charRuns, DEFAULT_WORD_BREAKS, type WordBreakSettings } from './ctc-word-breaks';
import { ctcStepsFromProbabilities, type CtcSteps, type FloatTensor } from './ppocr-models';

export const REC_HEIGHT = 48;

/** An RGB image held as interleaved bytes. */
export interface RgbImage {
  data: Uint8Array;
  width: number;
  height: number;
}

/** One decoded crop: text, mean character probability, and which time step each character came from. */
export interface CtcReading {
  text: string;
  confidence: number;
  /** For each character of `text`, the time step it was emitted at. */
  steps: number[];
}

/** Width a crop is scaled to for a 48 px height, at least 8 px, at most `maxWidth`. */
export function recognitionWidth(box: Box, maxWidth: number): number {
  const ratio = (box.x1 - box.x0) / Math.max(1, box.y1 - box.y0);
  return Math.max(8, Math.min(maxWidth, Math.ceil(REC_HEIGHT * ratio)));
}

/**
 * A reusable Float32Array: `take(n)` hands out the first n values of one buffer that grows when needed, so the
 * tensors of each call do not each allocate (and page-fault in) fresh memory. Whoever takes must finish with the
 * values before the next `take`; the PP-OCR engine serves one call at a time per model pair.
 */
export class ScratchFloats {
  private buffer = new Float32Array(0);

  take = (length: number): Float32Array => {
    if (this.buffer.length < length) this.buffer = new Float32Array(Math.ceil(length * 1.25));
    return this.buffer.subarray(0, length);
  };
}

/**
 * Crops `boxes` from `image` into one NCHW tensor of `width` columns: each crop scaled (bilinear) to 48 × its own
 * width (`widths[i]`), normalised to [-1, 1], the rest of the row padded with zeros as PaddleOCR does. `into`
 * (ScratchFloats.take) supplies the memory; it need not be zeroed.
 */
export function recognitionBatch(
  image: RgbImage,
  boxes: Box[],
  widths: number[],
  width: number,
  into?: (length: number) => Float32Array,
  contrast = false,
): FloatTensor {
  const plane = REC_HEIGHT * width;
  const data = into ? into(boxes.length * 3 * plane) : new Float32Array(boxes.length * 3 * plane);
  boxes.forEach((box, n) => {
    const cropW = widths[n] as number;
    const sx = (box.x1 - box.x0) / cropW;
    const sy = (box.y1 - box.y0) / REC_HEIGHT;
    const base = n * 3 * plane;
    for (let y = 0; y < REC_HEIGHT; y += 1) {
      const fy = Math.min(image.height - 1, Math.max(0, box.y0 + (y + 0.5) * sy - 0.5));
      const y0 = Math.floor(fy);
      const y1 = Math.min(image.height - 1, y0 + 1);
      const wy = fy - y0;
      for (let x = 0; x < cropW; x += 1) {
        const fx = Math.min(image.width - 1, Math.max(0, box.x0 + (x + 0.5) * sx - 0.5));
        const x0 = Math.floor(fx);
        const x1 = Math.min(image.width - 1, x0 + 1);
        const wx = fx - x0;
        const a = (y0 * image.width + x0) * 3;
        const b = (y0 * image.width + x1) * 3;
        const c = (y1 * image.width + x0) * 3;
        const d = (y1 * image.width + x1) * 3;
        for (let ch = 0; ch < 3; ch += 1) {
          const top = (image.data[a + ch] as number) * (1 - wx) + (image.data[b + ch] as number) * wx;
          const bottom = (image.data[c + ch] as number) * (1 - wx) + (image.data[d + ch] as number) * wx;
          const v = top * (1 - wy) + bottom * wy;
          data[base + ch * plane + y * width + x] = v / 127.5 - 1;
        }
      }
      if (cropW < width) {
        for (let ch = 0; ch < 3; ch += 1) {
          const row = base + ch * plane + y * width;
          data.fill(0, row + cropW, row + width);
        }
      }
    }
    if (contrast) stretchContrast(data, base, plane, width, cropW);
  });
  return { data, dims: [boxes.length, 3, REC_HEIGHT, width] };
}

/** The share of a crop's darkest and lightest pixels `stretchContrast` lets saturate. */
const STRETCH_TAIL = 0.02;

/**
 * Spreads one crop's brightness over the full range in place: the value STRETCH_TAIL of its pixels are darker than
 * becomes black and the one STRETCH_TAIL are lighter than becomes white, the same linear map on every channel, so
 * faint thermal print (grey ink on grey paper) reaches the contrast the recogniser was trained on.
 */
function stretchContrast(data: Float32Array, base: number, plane: number, width: number, cropW: number): void {
  const histogram = new Uint32Array(256);
  const luma = (y: number, x: number): number => {
    let sum = 0;
    for (let ch = 0; ch < 3; ch += 1) sum += data[base + ch * plane + y * width + x] as number;
    return Math.max(0, Math.min(255, Math.round(((sum / 3 + 1) * 255) / 2)));
  };
  for (let y = 0; y < REC_HEIGHT; y += 1) for (let x = 0; x < cropW; x += 1) histogram[luma(y, x)]! += 1;
  const tail = Math.floor(REC_HEIGHT * cropW * STRETCH_TAIL);
  let low = 0;
  for (let seen = 0; low < 255 && seen + (histogram[low] as number) <= tail; low += 1) seen += histogram[low] as number;
  let high = 255;
  for (let seen = 0; high > 0 && seen + (histogram[high] as number) <= tail; high -= 1) {
    seen += histogram[high] as number;
  }
  if (high - low < 8) return;
  const [from, to] = [low / 127.5 - 1, high / 127.5 - 1];
  const gain = 2 / (to - from);
  for (let ch = 0; ch < 3; ch += 1) {
    for (let y = 0; y < REC_HEIGHT; y += 1) {
      const row = base + ch * plane + y * width;
      for (let x = 0; x < cropW; x += 1) {
        const v = ((data[row + x] as number) - from) * gain - 1;
        data[row + x] = v < -1 ? -1 : v > 1 ? 1 : v;
      }
    }
  }
}

/**
 * Greedy CTC decoding of one batch output (N × T × C) with `alphabet[0]` the blank: each step's winner, repeats and
 * blanks removed. Words break where the space class wins, and where ctc-word-breaks.ts sees a gap: the Chinese-trained
 * model rarely lets the space class win on tightly printed Latin text (`SOONHUATMACHINERY`), but gives it a clear
 * secondary peak in the gap between words (word gaps peak at 0.12–0.4 on sroie receipts, letter gaps stay under
 * 0.03), and leaves a run of blank steps there.
 */
export function decodeCtc(
  output: FloatTensor,
  alphabet: readonly string[],
  breaks: Partial<WordBreakSettings> = {},
): CtcReading[] {
  return decodeCtcSteps(ctcStepsFromProbabilities(output, alphabet.lastIndexOf(' ')), alphabet, breaks);
}

/** `decodeCtc` on what the rewritten network outputs: per step the winner, its probability and the space's. */
export function decodeCtcSteps(
  out: CtcSteps,
  alphabet: readonly string[],
  breaks: Partial<WordBreakSettings> = {},
): CtcReading[] {
  const settings = { ...DEFAULT_WORD_BREAKS, ...breaks };
  const spaceClass = alphabet.lastIndexOf(' ');
  const readings: CtcReading[] = [];
  for (let i = 0; i < out.n; i += 1) {
    const runs = charRuns(out, i);
    const broken = breaksBefore(runs, alphabet, spaceClass, settings);
    let text = '';
    let sum = 0;
    const at: number[] = [];
    runs.forEach((run, k) => {
      const ch = alphabet[run.cls] ?? '';
      if (broken[k] && !text.endsWith(' ')) {
        text += ' ';
        at.push(run.first);
      }
      text += ch;
      for (let u = 0; u < ch.length; u += 1) at.push(run.first);
      sum += out.bestP[i * out.steps + run.first] as number;
    });
    readings.push({ text, confidence: runs.length > 0 ? sum / runs.length : 0, steps: at });
  }
  return readings;
}

/**
 * Splits a reading into words at spaces and places each word inside `box`: a time step covers `stepWidth` columns of
 * the 48 px-high crop, which maps back to `box` by `cropWidth`. NFKC folds full-width forms the Chinese-trained
 * alphabet emits (`：`, `１`) into ASCII.
 */
export function wordsFromReading(reading: CtcReading, box: Box, cropWidth: number, stepWidth: number): LayoutWord[] {
  const scale = (box.x1 - box.x0) / cropWidth;
  const words: LayoutWord[] = [];
  let start = -1;
  const flush = (end: number): void => {
    if (start < 0) return;
    const text = reading.text.slice(start, end).normalize('NFKC').trim();
    if (text !== '') {
      const first = reading.steps[start] as number;
      const last = reading.steps[end - 1] as number;
      const x0 = Math.max(box.x0, box.x0 + (first - 0.5) * stepWidth * scale);
      const x1 = Math.min(box.x1, box.x0 + (last + 1.5) * stepWidth * scale);
      words.push({
        text,
        box: { x0: Math.round(x0), y0: Math.round(box.y0), x1: Math.round(x1), y1: Math.round(box.y1) },
        confidence: reading.confidence,
      });
    }
    start = -1;
  };
  for (let k = 0; k < reading.text.length; k += 1) {
    if (reading.text[k] === ' ') flush(k);
    else if (start < 0) start = k;
  }
  flush(reading.text.length);
  return words;
}
