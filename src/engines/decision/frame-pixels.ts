/**
 * Decodes one decision frame (JPEG or PNG) into the small pixel grids every local measure reads.
 *
 * A camera sends many frames a second, so the frame is decoded once, already shrunk (libjpeg's shrink-on-load
 * does most of the work for JPEG), into RGB at most {@link WORK_SIZE} pixels on its long side; the measures read
 * that grid and a grey copy. Only JPEG and PNG are frames: their magic bytes are checked before sharp sees them,
 * and any decode failure becomes the image engine's `invalid_media`.
 */
import sharp from 'sharp';
import { describeDecodeError, invalidMedia } from '../image/image.engine';

/** Longest side, in pixels, of the grid the measures read. */
export const WORK_SIZE = 320;

/** Frames larger than this many pixels are refused before decoding (a 16k × 16k bomb costs nothing to refuse). */
const MAX_FRAME_PIXELS = 40_000_000;

export interface FramePixels {
  width: number;
  height: number;
  /** width × height × 3, row-major RGB. */
  rgb: Uint8Array;
  /** width × height luma (BT.601). */
  grey: Uint8Array;
}

/** `jpeg`, `png`, or null when the bytes are neither. */
export function frameFormat(bytes: Buffer): 'jpeg' | 'png' | null {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (bytes.length >= 8 && bytes.readUInt32BE(0) === 0x89504e47 && bytes.readUInt32BE(4) === 0x0d0a1a0a) return 'png';
  return null;
}

/** Decode and shrink a frame. @throws 400 `invalid_media` for anything that is not a decodable JPEG or PNG. */
export async function decodeFrame(bytes: Buffer): Promise<FramePixels> {
  if (frameFormat(bytes) === null) throw invalidMedia('a frame must be one JPEG or PNG image');
  try {
    let image = sharp(bytes, { failOn: 'error', limitInputPixels: MAX_FRAME_PIXELS });
    // Camera streams rarely carry EXIF; auto-orienting costs a fifth of the decode, so only frames with it pay.
    if (mayHaveOrientation(bytes)) image = image.rotate();
    const { data, info } = await image
      .resize(WORK_SIZE, WORK_SIZE, { fit: 'inside', withoutEnlargement: true, fastShrinkOnLoad: true })
      .removeAlpha()
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    const rgb = new Uint8Array(data.buffer, data.byteOffset, data.length);
    const grey = new Uint8Array(info.width * info.height);
    for (let i = 0, p = 0; i < grey.length; i += 1, p += 3) {
      grey[i] = (77 * (rgb[p] as number) + 150 * (rgb[p + 1] as number) + 29 * (rgb[p + 2] as number)) >> 8;
    }
    return {
      width: info.width,
      height: info.height,
      rgb,
      grey,
    };
  } catch (error) {
    throw invalidMedia(describeDecodeError(error));
  }
}

/** True when the frame may carry an EXIF block (JPEG APP1 `Exif`, PNG `eXIf`), looked for near its start. */
function mayHaveOrientation(bytes: Buffer): boolean {
  const head = bytes.subarray(0, 65_536);
  return head.includes(EXIF_JPEG) || head.includes(EXIF_PNG);
}

const EXIF_JPEG = Buffer.from('Exif\0\0', 'latin1');
const EXIF_PNG = Buffer.from('eXIf', 'latin1');
