/**
 * Tells what bytes are from their first bytes (magic numbers), because callers' content types and file names
 * are often missing or wrong (a data URL that says image/jpeg around a PNG, `upload.bin`).
 */

export type MediaFamily = 'image' | 'document' | 'video' | 'audio' | 'unknown';

export interface SniffedType {
  family: MediaFamily;
  mimeType: string;
}

const startsWith = (buf: Buffer, bytes: number[], offset = 0): boolean =>
  buf.length >= offset + bytes.length && bytes.every((b, i) => buf[offset + i] === b);
const ascii = (buf: Buffer, start: number, end: number): string => buf.subarray(start, end).toString('latin1');

/** The media family and MIME type of `buf`, or `unknown` when nothing matches. */
export function sniffMediaType(buf: Buffer): SniffedType {
  if (ascii(buf, 0, 1024).includes('%PDF-')) return { family: 'document', mimeType: 'application/pdf' };
  if (startsWith(buf, [0x89, 0x50, 0x4e, 0x47])) return { family: 'image', mimeType: 'image/png' };
  if (startsWith(buf, [0xff, 0xd8, 0xff])) return { family: 'image', mimeType: 'image/jpeg' };
  if (ascii(buf, 0, 4) === 'GIF8') return { family: 'image', mimeType: 'image/gif' };
  if (ascii(buf, 0, 4) === 'RIFF' && ascii(buf, 8, 12) === 'WEBP') return { family: 'image', mimeType: 'image/webp' };
  if (ascii(buf, 0, 4) === 'RIFF' && ascii(buf, 8, 12) === 'WAVE') return { family: 'audio', mimeType: 'audio/wav' };
  if (startsWith(buf, [0x49, 0x49, 0x2a, 0x00]) || startsWith(buf, [0x4d, 0x4d, 0x00, 0x2a])) {
    return { family: 'image', mimeType: 'image/tiff' };
  }
  if (ascii(buf, 0, 2) === 'BM') return { family: 'image', mimeType: 'image/bmp' };
  if (ascii(buf, 4, 8) === 'ftyp') {
    const brand = ascii(buf, 8, 12);
    if (/^(heic|heix|mif1|msf1|avif)$/.test(brand)) {
      return { family: 'image', mimeType: `image/${brand === 'avif' ? 'avif' : 'heic'}` };
    }
    if (/^M4A/.test(brand)) return { family: 'audio', mimeType: 'audio/mp4' };
    return { family: 'video', mimeType: brand.startsWith('qt') ? 'video/quicktime' : 'video/mp4' };
  }
  if (startsWith(buf, [0x1a, 0x45, 0xdf, 0xa3])) return { family: 'video', mimeType: 'video/webm' };
  if (ascii(buf, 0, 4) === 'OggS') return { family: 'audio', mimeType: 'audio/ogg' };
  if (ascii(buf, 0, 4) === 'fLaC') return { family: 'audio', mimeType: 'audio/flac' };
  if (ascii(buf, 0, 3) === 'ID3' || startsWith(buf, [0xff, 0xfb]) || startsWith(buf, [0xff, 0xf3])) {
    return { family: 'audio', mimeType: 'audio/mpeg' };
  }
  if (startsWith(buf, [0xff, 0xf1]) || startsWith(buf, [0xff, 0xf9])) return { family: 'audio', mimeType: 'audio/aac' };
  if (ascii(buf, 0, 4) === 'RIFF' && ascii(buf, 8, 11) === 'AVI') {
    return { family: 'video', mimeType: 'video/x-msvideo' };
  }
  if (/^\s*<(\?xml|svg)/i.test(ascii(buf, 0, 256)) && ascii(buf, 0, 1024).includes('<svg')) {
    return { family: 'image', mimeType: 'image/svg+xml' };
  }
  return { family: 'unknown', mimeType: 'application/octet-stream' };
}
