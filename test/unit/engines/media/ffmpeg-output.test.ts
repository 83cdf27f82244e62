/**
 * Parsers for ffmpeg's output: PNG streams, showinfo lines and the `ffmpeg -i` summary.
 */
import { createCanvas } from '@napi-rs/canvas';
import { showinfoTime, splitPngStream } from '../../../../src/engines/media/ffmpeg-output';
import { parseFfmpegInfo } from '../../../../src/engines/media/ffmpeg-probe';
import { lastMessage } from '../../../../src/engines/media/media-errors';

const png = (width: number, height: number): Buffer => createCanvas(width, height).toBuffer('image/png');

describe('splitPngStream', () => {
  it('cuts concatenated PNGs apart with their sizes and drops a truncated tail', () => {
    const a = png(3, 2);
    const b = png(5, 4);
    const images = splitPngStream(Buffer.concat([a, b, a.subarray(0, a.length - 5)]));
    expect(images.map((i) => [i.width, i.height])).toEqual([
      [3, 2],
      [5, 4],
    ]);
    expect(images[1]?.png.equals(b)).toBe(true);
    expect(splitPngStream(Buffer.from('not a png'))).toEqual([]);
  });
});

describe('showinfoTime', () => {
  const line = '[showinfo@frames @ 0x3c223500] n:   3 pts:      3 pts_time:3.52    pos:    48716 fmt:yuv420p';
  it('reads pts_time from the named instance only', () => {
    expect(showinfoTime(line, 'frames')).toBe(3.52);
    expect(showinfoTime(line, 'scene')).toBeNull();
    expect(showinfoTime('[showinfo@frames @ 0x1] color_range:unknown', 'frames')).toBeNull();
  });
});

describe('parseFfmpegInfo', () => {
  it('reads the input summary ffmpeg prints', () => {
    const stderr = [
      "Input #0, mpegts, from '/tmp/prism-media-x/input':",
      '  Duration: 00:01:02.50, start: 1.400000, bitrate: 150 kb/s',
      '    Stream #0:0[0x100]: Video: h264 (Main) ([27][0][0][0] / 0x001B), yuv420p(progressive), 1280x720 [SAR 1:1 DAR 16:9], 29.97 fps, 29.97 tbr, 90k tbn',
      '    Stream #0:1[0x101](eng): Audio: aac (LC) ([15][0][0][0] / 0x000F), 48000 Hz, stereo, fltp, 128 kb/s',
      '    Stream #0:2: Video: mjpeg, yuvj420p, 300x300, 90k tbr (attached pic)',
      'At least one output file must be specified',
    ].join('\n');
    expect(parseFfmpegInfo(stderr)).toEqual({
      format: 'mpegts',
      durationS: 62.5,
      startS: 1.4,
      streams: [
        { kind: 'video', index: 0, codec: 'h264', width: 1280, height: 720, fps: 29.97 },
        { kind: 'audio', index: 1, codec: 'aac', channels: 2, sampleRate: 48000 },
      ],
    });
    expect(parseFfmpegInfo('input: Invalid data found when processing input')).toBeNull();
  });
});

describe('lastMessage', () => {
  it('keeps the last real error, without paths, addresses or progress lines', () => {
    const stderr = [
      '[h264 @ 0x424355c0] Invalid NAL unit size (1431655765 > 158).',
      'Error while decoding stream #0:0: Invalid data found when processing /tmp/prism-media-abc/input',
      '[showinfo@frames @ 0x3c223500] color_range:unknown',
      'frame=   10 fps=0.0 q=-0.0 size=     280kB',
      'Conversion failed!',
    ].join('\n');
    expect(lastMessage(stderr, '/tmp/prism-media-abc/input')).toBe(
      'Error while decoding stream #0:0: Invalid data found when processing input',
    );
    expect(lastMessage('', '/x', 'exited with SIGSEGV')).toBe('exited with SIGSEGV');
  });
});
