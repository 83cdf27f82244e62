/**
 * The image engine: the one place that decodes caller images with sharp.
 *
 * It validates what callers send (an allow-list of raster formats, a pixel limit, a decodable body), applies the
 * EXIF orientation so boxes match what a person sees, caps the size, and converts to PNG for OCR. Every failure to
 * decode becomes a 400 `invalid_media` with a message that names the problem but never a path or a stack.
 */
import sharp from 'sharp';
import { BadRequestError } from '../../domain/errors';

/** Formats accepted from callers. SVG is refused on purpose: it is a document that can reference other files. */
export const ACCEPTED_IMAGE_FORMATS = ['jpeg', 'png', 'webp', 'tiff', 'gif', 'heif', 'avif'] as const;

const DEFAULT_MAX_INPUT_PIXELS = 100_000_000;

/** What Prism needs to know about an image, after EXIF orientation. */
export interface ImageInfo {
  width: number;
  height: number;
  /** sharp's format name: `jpeg`, `png`, `webp`, … */
  format: string;
}

export interface PngImage extends ImageInfo {
  format: 'png';
  png: Buffer;
  /** Output size ÷ input size (1 unless the image was shrunk to fit `maxDimension`). */
  scale: number;
}

export interface ImageEngineOptions {
  /** Largest accepted input in pixels (width × height, default 100 million). */
  maxInputPixels?: number;
  /** Longest side of converted output; larger images are shrunk to fit (default 4096). */
  maxDimension?: number;
}

export interface ImageEngine {
  /** Validates and describes an image; throws `invalid_media` if it is not one Prism accepts. */
  inspect(image: Buffer): Promise<ImageInfo>;
  /** Decodes, auto-orients (EXIF), shrinks to `maxDimension` and re-encodes as PNG. */
  toPng(image: Buffer, opts?: { maxDimension?: number }): Promise<PngImage>;
}

/** The 400 every undecodable or refused image becomes. */
export function invalidMedia(reason: string): BadRequestError {
  return new BadRequestError(`Invalid image: ${reason}`, 'invalid_media');
}

/** Maps a sharp/libvips error to a short, path-free reason. */
export function describeDecodeError(error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  if (/unsupported image format/i.test(message)) return 'the data is not an image in a supported format';
  if (/empty/i.test(message)) return 'the image is empty';
  if (/pixel limit/i.test(message)) return 'the image has too many pixels';
  if (/premature end|truncated|corrupt|bad|invalid/i.test(message)) return 'the image data is corrupt or truncated';
  return 'the image could not be decoded';
}

/** Validates an image and describes it after EXIF orientation; throws `invalid_media` if Prism does not accept it. */
export async function inspectImage(image: Buffer, maxInputPixels = DEFAULT_MAX_INPUT_PIXELS): Promise<ImageInfo> {
  if (image.length === 0) throw invalidMedia('the image is empty');
  let meta: sharp.Metadata;
  try {
    meta = await sharp(image).metadata();
  } catch (error) {
    throw invalidMedia(describeDecodeError(error));
  }
  const format = meta.format as string;
  if (!(ACCEPTED_IMAGE_FORMATS as readonly string[]).includes(format)) {
    throw invalidMedia(`format '${format}' is not accepted (use ${ACCEPTED_IMAGE_FORMATS.join(', ')})`);
  }
  const { width, height } = meta;
  if (!width || !height) throw invalidMedia('the image has no size');
  if (width * height > maxInputPixels) {
    throw invalidMedia(`${width}x${height} is over the limit of ${maxInputPixels} pixels`);
  }
  const swapped = (meta.orientation ?? 1) >= 5;
  return { width: swapped ? height : width, height: swapped ? width : height, format };
}

/** Builds the image engine with its size limits. */
export function createImageEngine(options: ImageEngineOptions = {}): ImageEngine {
  const maxInputPixels = options.maxInputPixels ?? DEFAULT_MAX_INPUT_PIXELS;
  const defaultMaxDimension = options.maxDimension ?? 4096;

  const inspect = (image: Buffer): Promise<ImageInfo> => inspectImage(image, maxInputPixels);

  return {
    inspect,
    async toPng(image, opts = {}) {
      const info = await inspect(image);
      const limit = opts.maxDimension ?? defaultMaxDimension;
      const scale = Math.min(1, limit / Math.max(info.width, info.height));
      try {
        let pipeline = sharp(image, { limitInputPixels: maxInputPixels }).rotate();
        if (scale < 1) {
          pipeline = pipeline.resize({
            width: Math.round(info.width * scale),
            height: Math.round(info.height * scale),
          });
        }
        const { data, info: out } = await pipeline.png().toBuffer({ resolveWithObject: true });
        return { png: data, width: out.width, height: out.height, format: 'png', scale: out.width / info.width };
      } catch (error) {
        throw invalidMedia(describeDecodeError(error));
      }
    },
  };
}
