/**
 * Which ffmpeg demuxer may read caller bytes, decided from their magic numbers before any tool runs.
 *
 * Left to itself, ffmpeg probes the input against every demuxer it has — including text formats that make it open
 * other files or addresses named inside (ffconcat lists, HLS playlists, SDP). Every run is therefore given `-f` with
 * the one demuxer the sniffed container needs, from this allow-list; bytes that match none are refused as
 * `invalid_media` without running anything. `concat`, `hls`, `sdp` and the other text demuxers are not on it.
 */
import path from 'node:path';

/** Demuxers a caller's media may be read with (ffmpeg `-f` names). */
export const ALLOWED_DEMUXERS = [
  'wav',
  'mov',
  'matroska',
  'ogg',
  'flac',
  'mp3',
  'aac',
  'avi',
  'mpegts',
  'mpeg',
  'flv',
  'amr',
  'asf',
  'aiff',
  'caf',
] as const;
export type Demuxer = (typeof ALLOWED_DEMUXERS)[number];

const ascii = (buf: Buffer, start: number, end: number): string => buf.subarray(start, end).toString('latin1');
const bytesAt = (buf: Buffer, bytes: number[], offset = 0): boolean =>
  buf.length >= offset + bytes.length && bytes.every((b, i) => buf[offset + i] === b);

/** The demuxer for `bytes`, or null when they are not a container on the allow-list. */
export function sniffDemuxer(bytes: Buffer): Demuxer | null {
  const riff = ascii(bytes, 0, 4) === 'RIFF';
  if (riff && ascii(bytes, 8, 12) === 'WAVE') return 'wav';
  if (riff && ascii(bytes, 8, 11) === 'AVI') return 'avi';
  if (ascii(bytes, 4, 8) === 'ftyp') return 'mov';
  if (bytesAt(bytes, [0x1a, 0x45, 0xdf, 0xa3])) return 'matroska';
  if (ascii(bytes, 0, 4) === 'OggS') return 'ogg';
  if (ascii(bytes, 0, 4) === 'fLaC') return 'flac';
  if (ascii(bytes, 0, 3) === 'ID3') return 'mp3';
  if (bytesAt(bytes, [0xff, 0xf1]) || bytesAt(bytes, [0xff, 0xf9])) return 'aac';
  if (bytes.length >= 2 && bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0) return 'mp3';
  if (bytes[0] === 0x47 && (bytes.length < 189 || bytes[188] === 0x47)) return 'mpegts';
  if (bytesAt(bytes, [0x00, 0x00, 0x01, 0xba])) return 'mpeg';
  if (ascii(bytes, 0, 3) === 'FLV') return 'flv';
  if (ascii(bytes, 0, 5) === '#!AMR') return 'amr';
  if (bytesAt(bytes, [0x30, 0x26, 0xb2, 0x75, 0x8e, 0x66, 0xcf, 0x11])) return 'asf';
  if (ascii(bytes, 0, 4) === 'FORM' && /^AIF[FC]$/.test(ascii(bytes, 8, 12))) return 'aiff';
  if (ascii(bytes, 0, 4) === 'caff') return 'caf';
  return null;
}

/** The temp file name that carries its demuxer (`input.mov`), so every tool run on it can be told `-f`. */
export function inputFileName(demuxer: Demuxer): string {
  return `input.${demuxer}`;
}

/**
 * What precedes and names the input on every ffmpeg/ffprobe command line: the demuxer named by the file's
 * extension, and only the `file` protocol (a container cannot make the tool reach the network or a device).
 * @throws Error for a file not named by {@link inputFileName} (a wiring bug: such a file never reaches a tool).
 */
export function inputArgs(file: string): string[] {
  const demuxer = path.extname(file).slice(1);
  if (!(ALLOWED_DEMUXERS as readonly string[]).includes(demuxer)) throw new Error('media input without a demuxer');
  return ['-f', demuxer, '-protocol_whitelist', 'file', '-i', file];
}
