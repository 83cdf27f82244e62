/**
 * Hand-crafted pixel features for the multimodal embedding: what an image looks like, not what it shows.
 *
 * There is no offline CLIP-style network on npm, so the non-text part of an image vector is classical: a colour
 * histogram, edge density and gradient orientations on a coarse grid, and a small grey thumbnail. These find
 * near-duplicates, resized/re-encoded copies, and images with similar colours and layout; they do NOT know that two
 * different photos both show a dog. One sharp decode (EXIF-oriented, alpha flattened on white, squashed to
 * 128×128) feeds every feature. Block order puts the compact, robust blocks first for truncation:
 *   0–63     joint RGB histogram, 4×4×4 bins, square-rooted (Hellinger)
 *   64–127   edge density on an 8×8 grid (share of pixels whose Sobel magnitude is over a threshold)
 *   128–255  gradient-orientation histograms, 4×4 cells × 8 directions, magnitude-weighted, per cell normalised
 *   256–1279 32×32 grey thumbnail, mean-centred and contrast-normalised
 */
import sharp from 'sharp';
import { describeDecodeError, invalidMedia } from '../image/image.engine';
import { normalizeInPlace } from './vector-math';

/** Length of the pixel feature block. */
export const PIXEL_FEATURE_LENGTH = 1280;

const SIDE = 128;
const EDGE_THRESHOLD = 48;
/** Each block's share of the squared norm. */
const SHARES = { colour: 0.3, edges: 0.15, orientations: 0.25, thumbnail: 0.3 } as const;

async function decodeRgb(image: Buffer): Promise<Buffer> {
  try {
    return await sharp(image, { failOn: 'error' })
      .rotate()
      .flatten({ background: '#ffffff' })
      .resize(SIDE, SIDE, { fit: 'fill' })
      .removeAlpha()
      .toColourspace('srgb')
      .raw()
      .toBuffer();
  } catch (error) {
    throw invalidMedia(describeDecodeError(error));
  }
}

/** Scales `out[from..to)` to norm √share (left at zero when empty). */
function scaleBlock(out: Float32Array, from: number, to: number, share: number): void {
  const block = out.subarray(from, to);
  normalizeInPlace(block);
  const s = Math.sqrt(share);
  for (let i = 0; i < block.length; i += 1) block[i] = (block[i] as number) * s;
}

function colourHistogram(rgb: Buffer, out: Float32Array): void {
  for (let p = 0; p < SIDE * SIDE; p += 1) {
    const bin =
      ((rgb[p * 3] as number) >> 6) * 16 + ((rgb[p * 3 + 1] as number) >> 6) * 4 + ((rgb[p * 3 + 2] as number) >> 6);
    out[bin] = (out[bin] as number) + 1;
  }
  for (let i = 0; i < 64; i += 1) out[i] = Math.sqrt((out[i] as number) / (SIDE * SIDE));
}

function greyOf(rgb: Buffer): Float32Array {
  const grey = new Float32Array(SIDE * SIDE);
  for (let p = 0; p < SIDE * SIDE; p += 1) {
    grey[p] = 0.299 * (rgb[p * 3] as number) + 0.587 * (rgb[p * 3 + 1] as number) + 0.114 * (rgb[p * 3 + 2] as number);
  }
  return grey;
}

function gradients(grey: Float32Array, out: Float32Array): void {
  const at = (x: number, y: number): number => grey[y * SIDE + x] as number;
  for (let y = 1; y < SIDE - 1; y += 1) {
    for (let x = 1; x < SIDE - 1; x += 1) {
      const gx =
        at(x + 1, y - 1) + 2 * at(x + 1, y) + at(x + 1, y + 1) - at(x - 1, y - 1) - 2 * at(x - 1, y) - at(x - 1, y + 1);
      const gy =
        at(x - 1, y + 1) + 2 * at(x, y + 1) + at(x + 1, y + 1) - at(x - 1, y - 1) - 2 * at(x, y - 1) - at(x + 1, y - 1);
      const magnitude = Math.hypot(gx, gy) / 4;
      if (magnitude > EDGE_THRESHOLD) {
        const cell = 64 + (y >> 4) * 8 + (x >> 4);
        out[cell] = (out[cell] as number) + 1 / 256;
      }
      let angle = Math.atan2(gy, gx);
      if (angle < 0) angle += Math.PI;
      const direction = Math.min(7, Math.floor((angle / Math.PI) * 8));
      const slot = 128 + ((y >> 5) * 4 + (x >> 5)) * 8 + direction;
      out[slot] = (out[slot] as number) + magnitude;
    }
  }
  for (let cell = 0; cell < 16; cell += 1) normalizeInPlace(out.subarray(128 + cell * 8, 136 + cell * 8));
}

function thumbnail(grey: Float32Array, out: Float32Array): void {
  let mean = 0;
  for (let ty = 0; ty < 32; ty += 1) {
    for (let tx = 0; tx < 32; tx += 1) {
      let sum = 0;
      for (let dy = 0; dy < 4; dy += 1) {
        for (let dx = 0; dx < 4; dx += 1) sum += grey[(ty * 4 + dy) * SIDE + tx * 4 + dx] as number;
      }
      out[256 + ty * 32 + tx] = sum / 16;
      mean += sum / 16;
    }
  }
  mean /= 1024;
  for (let i = 256; i < PIXEL_FEATURE_LENGTH; i += 1) out[i] = (out[i] as number) - mean;
}

/**
 * The unit pixel-feature vector of an image (any format sharp decodes).
 * @throws BadRequestError `invalid_media` when the bytes are not a decodable image.
 */
export async function pixelFeatures(image: Buffer): Promise<Float32Array> {
  const rgb = await decodeRgb(image);
  const out = new Float32Array(PIXEL_FEATURE_LENGTH);
  colourHistogram(rgb, out);
  const grey = greyOf(rgb);
  gradients(grey, out);
  thumbnail(grey, out);
  scaleBlock(out, 0, 64, SHARES.colour);
  scaleBlock(out, 64, 128, SHARES.edges);
  scaleBlock(out, 128, 256, SHARES.orientations);
  scaleBlock(out, 256, PIXEL_FEATURE_LENGTH, SHARES.thumbnail);
  return normalizeInPlace(out);
}
