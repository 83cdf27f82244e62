/**
 * Puts caller bytes in a private temporary file for the length of one tool run, after a cheap safety check.
 *
 * ffmpeg needs a seekable input for MP4/MOV (the index may sit at the end), so piping is not enough. The folder is
 * created with mkdtemp (mode 0700) and removed whatever happens. Text is refused before any tool sees it: every
 * audio/video container we accept is binary, while the text formats ffmpeg understands (HLS playlists, concat
 * lists, SDP) make it open other files or network addresses named inside them. Bytes that pass are named after
 * the container they sniff as (container-format.ts), and only that demuxer is allowed to read them.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sniffMediaType } from '../../lib/media-type';
import { inputFileName, sniffDemuxer } from './container-format';
import { invalidMedia } from './media-errors';

const SNIFF_BYTES = 4096;

/**
 * Writes `bytes` to a fresh temp file, runs `work(file)`, then deletes the folder even when `work` throws.
 * @throws BadRequestError `invalid_media` for empty input or input that is plain text.
 */
export async function withTempInput<T>(
  bytes: Buffer,
  work: (file: string) => Promise<T>,
  tmpDir: string = os.tmpdir(),
): Promise<T> {
  if (bytes.length === 0) throw invalidMedia('The media is empty');
  if (looksLikeText(bytes)) throw invalidMedia('The input is text, not audio or video');
  const demuxer = sniffDemuxer(bytes);
  if (!demuxer) throw invalidMedia(unsupportedContainer(bytes));
  const dir = await fs.mkdtemp(path.join(tmpDir, 'prism-media-'));
  try {
    const file = path.join(dir, inputFileName(demuxer));
    await fs.writeFile(file, bytes, { mode: 0o600 });
    return await work(file);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

function unsupportedContainer(bytes: Buffer): string {
  const sniffed = sniffMediaType(bytes);
  if (sniffed.family === 'image' || sniffed.family === 'document') {
    return `The input is ${sniffed.mimeType.split('/')[1] ?? 'a still file'}, not audio or video`;
  }
  return 'The media is not in a supported audio or video container';
}

/** True when the first bytes hold no NUL or other control byte besides tab, line breaks, form feed and escape. */
export function looksLikeText(bytes: Buffer): boolean {
  const end = Math.min(bytes.length, SNIFF_BYTES);
  for (let i = 0; i < end; i++) {
    const b = bytes[i]!;
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0b && b !== 0x0c && b !== 0x0d && b !== 0x1b) return false;
    if (b === 0x7f) return false;
  }
  return true;
}
