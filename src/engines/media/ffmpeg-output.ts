/**
 * Parsers for what ffmpeg writes: a stream of concatenated PNGs on stdout (`-f image2pipe -c:v png`) and the
 * `showinfo` filter's per-frame lines on stderr, which carry each frame's presentation time.
 */

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** One PNG cut out of an image2pipe stream, with the size from its IHDR chunk. */
export interface PngImage {
  png: Buffer;
  width: number;
  height: number;
}

/** Splits concatenated PNG files by walking their chunks up to each IEND; a truncated tail is dropped. */
export function splitPngStream(stream: Buffer): PngImage[] {
  const images: PngImage[] = [];
  let start = 0;
  while (start + PNG_SIGNATURE.length <= stream.length) {
    if (!stream.subarray(start, start + 8).equals(PNG_SIGNATURE)) break;
    let pos = start + 8;
    let end = -1;
    while (pos + 12 <= stream.length) {
      const length = stream.readUInt32BE(pos);
      const type = stream.toString('latin1', pos + 4, pos + 8);
      pos += 12 + length;
      if (type === 'IEND') {
        end = pos;
        break;
      }
    }
    if (end < 0 || end > stream.length) break;
    images.push({
      png: stream.subarray(start, end),
      width: stream.readUInt32BE(start + 16),
      height: stream.readUInt32BE(start + 20),
    });
    start = end;
  }
  return images;
}

/**
 * The `pts_time` of a showinfo line from the filter instance named `label` (`showinfo@label`), or null for any other
 * line. Naming the instances lets one ffmpeg run report two filter chains on the same stderr.
 */
export function showinfoTime(line: string, label: string): number | null {
  if (!line.startsWith(`[showinfo@${label} `)) return null;
  const match = /\bpts_time:\s*(-?[\d.]+(?:e[-+]?\d+)?)/.exec(line);
  if (!match?.[1]) return null;
  const t = Number(match[1]);
  return Number.isFinite(t) ? t : null;
}
