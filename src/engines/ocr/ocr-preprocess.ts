/**
 * Image preparation before tesseract, kept to the steps that measurably helped (see the notes in ocr.engine.ts):
 * EXIF orientation, greyscale, a cap on size, optional enlargement for small text, and whitening of large dark
 * areas that touch the image border (torn receipt edges, a dark table under a photographed page), which otherwise
 * make tesseract's layout analysis find no text at all.
 *
 * The output is a binary PGM (P5): leptonica reads it directly, so there is no PNG encode/decode on the hot path.
 */
import sharp from 'sharp';
import { AppError } from '../../domain/errors';
import { describeDecodeError, inspectImage, invalidMedia } from '../image/image.engine';

export interface PreprocessOptions {
  /** Longest side after preprocessing, before `scale` is applied. */
  maxDimension: number;
  /** Enlargement applied after the cap (1 = none). */
  scale?: number;
  /** Largest image handed to tesseract, in pixels, whatever `scale` asks. */
  maxPixels?: number;
}

export interface PreprocessedImage {
  /** PGM bytes for tesseract. */
  pgm: Buffer;
  /** Size of the caller's image after EXIF orientation (what boxes are reported in). */
  width: number;
  height: number;
  /** Preprocessed size ÷ caller's size. */
  scale: number;
}

/** Dark pixels (0–255) below this are border candidates. */
const DARK = 64;
/** Border-connected dark areas are whitened only when they cover at least this share of the image. */
const MIN_DARK_SHARE = 0.01;

export async function preprocessForOcr(image: Buffer, opts: PreprocessOptions): Promise<PreprocessedImage> {
  try {
    const { width, height } = await inspectImage(image);
    const cap = Math.min(1, opts.maxDimension / Math.max(width, height));
    let scale = cap * (opts.scale ?? 1);
    const maxPixels = opts.maxPixels ?? 40_000_000;
    if (width * height * scale * scale > maxPixels) scale = Math.sqrt(maxPixels / (width * height));
    let pipeline = sharp(image).rotate().flatten({ background: '#ffffff' }).greyscale();
    if (scale !== 1) {
      pipeline = pipeline.resize({
        width: Math.max(1, Math.round(width * scale)),
        height: Math.max(1, Math.round(height * scale)),
        fit: 'fill',
      });
    }
    const { data, info } = await pipeline.raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true });
    const pixels = new Uint8Array(data.buffer, data.byteOffset, data.length);
    whitenDarkBorder(pixels, info.width, info.height);
    const header = Buffer.from(`P5\n${info.width} ${info.height}\n255\n`, 'ascii');
    return { pgm: Buffer.concat([header, data]), width, height, scale: info.width / width };
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw invalidMedia(describeDecodeError(error));
  }
}

/**
 * Flood-fills dark pixels connected to the image border with white, if together they cover at least 1 % of the
 * image (a few dark specks on the edge are left alone). Works in place on an 8-bit greyscale buffer; returns how
 * many pixels were whitened.
 */
export function whitenDarkBorder(pixels: Uint8Array, width: number, height: number): number {
  const seen = new Uint8Array(width * height);
  const stack = new Int32Array(width * height);
  let top = 0;
  let count = 0;
  const visit = (i: number): void => {
    if (seen[i] === 0 && (pixels[i] as number) < DARK) {
      seen[i] = 1;
      stack[top++] = i;
    }
  };
  for (let x = 0; x < width; x += 1) {
    visit(x);
    visit((height - 1) * width + x);
  }
  for (let y = 0; y < height; y += 1) {
    visit(y * width);
    visit(y * width + width - 1);
  }
  while (top > 0) {
    const i = stack[--top] as number;
    count += 1;
    const x = i % width;
    if (x > 0) visit(i - 1);
    if (x < width - 1) visit(i + 1);
    if (i >= width) visit(i - width);
    if (i < width * (height - 1)) visit(i + width);
  }
  if (count < MIN_DARK_SHARE * width * height) return 0;
  for (let i = 0; i < seen.length; i += 1) if (seen[i] === 1) pixels[i] = 255;
  return count;
}
