/**
 * PP-OCR text detection (DB, "differentiable binarisation"): the network gives a per-pixel text probability map;
 * this module prepares its input and turns the map into text boxes, the way PaddleOCR's DBPostProcess does in its
 * fast mode (threshold, connected regions, mean-score filter, "unclip" expansion), with axis-aligned boxes because
 * documents reach us upright (EXIF orientation applied) and the recogniser reads axis-aligned crops.
 */
import sharp from 'sharp';
import type { Box } from '../types';
import type { FloatTensor } from './ppocr-models';
import type { RgbImage } from './ppocr-recognize';

/** ImageNet normalisation PaddleOCR's detector was trained with. */
const MEAN = [0.485, 0.456, 0.406] as const;
const STD = [0.229, 0.224, 0.225] as const;

export interface DetectOptions {
  /** Probability above which a pixel is text (default 0.3). */
  threshold?: number;
  /** Mean probability a region needs to be kept (default 0.6). */
  boxThreshold?: number;
  /** Expansion of each region: area × ratio ÷ perimeter pixels on every side (default 1.5). */
  unclipRatio?: number;
  /** Regions whose shorter side is under this many map pixels are dropped (default 3). */
  minSize?: number;
  /**
   * Share of the unclip distance applied at the left and right ends (default 1, PaddleOCR's). Less cuts the blank
   * columns every crop carries at both ends, which recognition pays for column by column.
   */
  unclipHorizontal?: number;
}

/** A detected text region in detector-input pixels, with its mean probability. */
export interface DetectedBox {
  box: Box;
  score: number;
}

/** Size of the detector input: the image scaled by `scale`, each side rounded to a multiple of 32 (at least 32). */
export function detectionSize(width: number, height: number, scale: number): { width: number; height: number } {
  const round32 = (v: number): number => Math.max(32, Math.round((v * scale) / 32) * 32);
  return { width: round32(width), height: round32(height) };
}

/**
 * Interleaved RGB bytes → the detector's normalised NCHW tensor, written into `into` (see ScratchFloats) when given:
 * a fresh 14 MB array costs ~60 ms of page faults on a page, more than filling it.
 */
export function detectionTensor(
  rgb: Uint8Array,
  width: number,
  height: number,
  into?: (length: number) => Float32Array,
): FloatTensor {
  const plane = width * height;
  const data = into ? into(3 * plane) : new Float32Array(3 * plane);
  for (let i = 0; i < plane; i += 1) {
    for (let c = 0; c < 3; c += 1) {
      data[c * plane + i] = ((rgb[i * 3 + c] as number) / 255 - (MEAN[c] as number)) / (STD[c] as number);
    }
  }
  return { data, dims: [1, 3, height, width] };
}

/**
 * Probability map (width × height, row-major) → text boxes in map pixels, clamped to the map. Regions are
 * 4-connected groups of pixels above `threshold`; each becomes its bounding box, kept if its mean probability
 * reaches `boxThreshold`, then expanded by the unclip distance (DB shrinks text regions during training).
 */
export function boxesFromProbabilityMap(
  prob: Float32Array,
  width: number,
  height: number,
  opts: DetectOptions = {},
): DetectedBox[] {
  const threshold = opts.threshold ?? 0.3;
  const boxThreshold = opts.boxThreshold ?? 0.6;
  const unclipRatio = opts.unclipRatio ?? 1.5;
  const minSize = opts.minSize ?? 3;
  const horizontal = opts.unclipHorizontal ?? 1;
  const seen = new Uint8Array(width * height);
  const stack = new Int32Array(width * height);
  const out: DetectedBox[] = [];
  for (let start = 0; start < prob.length; start += 1) {
    if (seen[start] === 1 || (prob[start] as number) <= threshold) continue;
    let top = 0;
    stack[top++] = start;
    seen[start] = 1;
    let x0 = width;
    let y0 = height;
    let x1 = 0;
    let y1 = 0;
    let sum = 0;
    let count = 0;
    while (top > 0) {
      const i = stack[--top] as number;
      const x = i % width;
      const y = (i - x) / width;
      sum += prob[i] as number;
      count += 1;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
      // The four neighbours, inlined: a closure per pixel cost a third of detection's post-processing time.
      let j = i - 1;
      if (x > 0 && seen[j] === 0 && (prob[j] as number) > threshold) {
        seen[j] = 1;
        stack[top++] = j;
      }
      j = i + 1;
      if (x < width - 1 && seen[j] === 0 && (prob[j] as number) > threshold) {
        seen[j] = 1;
        stack[top++] = j;
      }
      j = i - width;
      if (y > 0 && seen[j] === 0 && (prob[j] as number) > threshold) {
        seen[j] = 1;
        stack[top++] = j;
      }
      j = i + width;
      if (y < height - 1 && seen[j] === 0 && (prob[j] as number) > threshold) {
        seen[j] = 1;
        stack[top++] = j;
      }
    }
    const w = x1 - x0 + 1;
    const h = y1 - y0 + 1;
    if (Math.min(w, h) < minSize) continue;
    const score = sum / count;
    if (score < boxThreshold) continue;
    const d = (w * h * unclipRatio) / (2 * (w + h));
    const box = {
      x0: Math.max(0, x0 - d * horizontal),
      y0: Math.max(0, y0 - d),
      x1: Math.min(width, x1 + 1 + d * horizontal),
      y1: Math.min(height, y1 + 1 + d),
    };
    if (Math.min(box.x1 - box.x0, box.y1 - box.y0) < minSize + 2) continue;
    out.push({ box, score });
  }
  return out;
}

/**
 * The text boxes the detector (`detect`, the network) finds on a copy of the page scaled so its long side is at most
 * `maxSide`, in the page's coordinates. `into` supplies the input tensor's memory (ScratchFloats.take).
 */
export async function detectPageBoxes(
  detect: (input: FloatTensor) => Promise<FloatTensor>,
  page: RgbImage,
  maxSide: number,
  options: DetectOptions = {},
  into?: (length: number) => Float32Array,
): Promise<Box[]> {
  const scale = Math.min(1, maxSide / Math.max(page.width, page.height));
  const size = detectionSize(page.width, page.height, scale);
  const resized = await sharp(page.data, { raw: { width: page.width, height: page.height, channels: 3 } })
    .resize(size.width, size.height, { fit: 'fill' })
    .raw()
    .toBuffer();
  const prob = await detect(detectionTensor(resized, size.width, size.height, into));
  const detected = boxesFromProbabilityMap(prob.data, size.width, size.height, options);
  const sx = page.width / size.width;
  const sy = page.height / size.height;
  return detected.map(({ box }) => ({
    x0: box.x0 * sx,
    y0: box.y0 * sy,
    x1: Math.min(page.width, box.x1 * sx),
    y1: Math.min(page.height, box.y1 * sy),
  }));
}
