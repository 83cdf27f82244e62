/**
 * Generated camera frames for the decision tests and benchmark: text on a light background, blank, bright and
 * dark fills, a frame with a large dark block (a change), and noise (large, incompressible frames).
 */
import sharp from 'sharp';
import { renderTextImage } from './media-fixtures';

export const FRAME_WIDTH = 640;
export const FRAME_HEIGHT = 480;

export function textFrame(lines: string[] = ['EXIT 12', 'Platform 3', 'Trains every 10 minutes']): Buffer {
  return renderTextImage(lines, { width: FRAME_WIDTH, height: FRAME_HEIGHT, fontSize: 40, format: 'jpeg' });
}

export function solidFrame(colour: string, format: 'jpeg' | 'png' = 'jpeg'): Promise<Buffer> {
  const image = sharp({ create: { width: FRAME_WIDTH, height: FRAME_HEIGHT, channels: 3, background: colour } });
  return (format === 'png' ? image.png() : image.jpeg()).toBuffer();
}

/** A light frame with a dark block over its left half: against a blank light frame, about half of it changed. */
export async function blockFrame(): Promise<Buffer> {
  const block = await sharp({
    create: { width: FRAME_WIDTH / 2, height: FRAME_HEIGHT, channels: 3, background: '#202020' },
  })
    .png()
    .toBuffer();
  return sharp({ create: { width: FRAME_WIDTH, height: FRAME_HEIGHT, channels: 3, background: '#f0f0f0' } })
    .composite([{ input: block, left: 0, top: 0 }])
    .jpeg()
    .toBuffer();
}

/** Pseudo-random noise as a high-quality JPEG: large and slow to decode, like a busy scene. */
export function noiseFrame(width: number, height: number, seed = 1): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  let state = seed >>> 0 || 1;
  for (let i = 0; i < raw.length; i += 1) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    raw[i] = state & 0xff;
  }
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 95 })
    .toBuffer();
}
