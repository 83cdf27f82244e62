/**
 * A second way to probe: parse the stream summary `ffmpeg -i FILE` prints.
 *
 * The static ffprobe from @ffprobe-installer crashes (SIGSEGV) on every MPEG-TS file, a common container for camera
 * recordings and HLS segments, while the ffmpeg binary reads them fine. When ffprobe dies by a signal the probe
 * engine falls back to this parser; it yields the same {@link MediaProbe} fields from ffmpeg's human-readable text.
 */
import type { MediaProbe, MediaStreamInfo } from './types';

const CHANNEL_LAYOUTS: Record<string, number> = { mono: 1, stereo: 2, '2.1': 3, quad: 4, '5.0': 5, '5.1': 6, '7.1': 8 };

/** Parses the `Input #0` block of ffmpeg's stderr; null when there is none (ffmpeg could not open the input). */
export function parseFfmpegInfo(stderr: string): MediaProbe | null {
  const input = /^Input #0, (.+?), from /m.exec(stderr);
  if (!input?.[1]) return null;
  const duration = /Duration: (\d+):(\d\d):(\d\d(?:\.\d+)?)/.exec(stderr);
  const start = /Duration:[^\n]*start: (-?[\d.]+)/.exec(stderr);
  const streams: MediaStreamInfo[] = [];
  for (const m of stderr.matchAll(/^\s*Stream #0:(\d+)[^:]*: (Video|Audio): (\w+)(.*)$/gm)) {
    const [, index = '0', kind, codec = 'unknown', rest = ''] = m;
    if (kind === 'Video' && !rest.includes('(attached pic)')) {
      const size = /, (\d{1,5})x(\d{1,5})/.exec(rest);
      const fps = /, ([\d.]+) fps/.exec(rest);
      if (size) {
        streams.push({
          kind: 'video',
          index: Number(index),
          codec,
          width: Number(size[1]),
          height: Number(size[2]),
          fps: fps ? Number(fps[1]) : null,
        });
      }
    } else if (kind === 'Audio') {
      const rate = /, (\d+) Hz/.exec(rest);
      const layout = /Hz, ([\w.]+)(?:\(\w+\))?,/.exec(rest);
      const counted = /(\d+) channels/.exec(rest);
      const channels = counted ? Number(counted[1]) : (CHANNEL_LAYOUTS[layout?.[1] ?? ''] ?? 0);
      streams.push({ kind: 'audio', index: Number(index), codec, channels, sampleRate: rate ? Number(rate[1]) : 0 });
    }
  }
  const durationS = duration ? Number(duration[1]) * 3600 + Number(duration[2]) * 60 + Number(duration[3]) : null;
  return { format: input[1], durationS, startS: Math.max(0, Number(start?.[1] ?? 0)), streams };
}
