/**
 * Probing real generated media with the ffprobe the engines pick, and rejecting what is not media.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describeMediaTools, resolveMediaTools } from '../../../../src/engines/media/media-tools';
import { createProbeEngine } from '../../../../src/engines/media/probe.engine';
import { looksLikeText } from '../../../../src/engines/media/temp-input';
import { makeSilence, makeTone, makeVideo, mediaTools } from '../../../helpers/media-clips';

const probe = createProbeEngine(mediaTools);
const invalidMedia = { status: 400, code: 'invalid_media' };

describe('resolveMediaTools', () => {
  it('prefers explicit paths, then a system build, then the npm binaries, and says which', () => {
    expect(resolveMediaTools({ ffmpegPath: '/opt/ff', ffprobePath: '/opt/fp' })).toEqual({
      ffmpeg: '/opt/ff',
      ffprobe: '/opt/fp',
      origin: { ffmpeg: 'configured', ffprobe: 'configured' },
    });
    expect(resolveMediaTools({ exists: () => true })).toEqual({
      ffmpeg: '/usr/bin/ffmpeg',
      ffprobe: '/usr/bin/ffprobe',
      origin: { ffmpeg: 'system', ffprobe: 'system' },
    });
    expect(resolveMediaTools({ exists: (f) => f.startsWith('/usr/local/bin/') }).ffmpeg).toBe('/usr/local/bin/ffmpeg');
    const npm = resolveMediaTools({ exists: () => false });
    expect(npm.ffmpeg).toMatch(/@ffmpeg-installer/);
    expect(npm.ffprobe).toMatch(/@ffprobe-installer/);
    expect(npm.origin).toEqual({ ffmpeg: 'bundled', ffprobe: 'bundled' });
  });

  it('reports the version of what runs', async () => {
    const described = await describeMediaTools(resolveMediaTools({ exists: () => false }));
    expect(described.ffmpeg.origin).toBe('bundled');
    expect(described.ffmpeg.version).toMatch(/^ffmpeg version/);
    expect(described.ffprobe.version).toMatch(/^ffprobe version/);
  });
});

describe('probe', () => {
  it('reads duration, container and both streams of an MP4', async () => {
    const clip = await makeVideo([{ durationS: 3, color: 'red' }], {
      width: 320,
      height: 240,
      fps: 25,
      withTone: true,
    });
    const info = await probe.probe(clip);
    expect(info.durationS).toBeCloseTo(3, 1);
    expect(info.format).toContain('mp4');
    expect(info.streams).toEqual([
      { kind: 'video', index: 0, codec: 'h264', width: 320, height: 240, fps: 25 },
      { kind: 'audio', index: 1, codec: 'aac', channels: 1, sampleRate: 48000 },
    ]);
  });

  it('reads WAV and MP3 audio', async () => {
    const wav = await probe.probe(await makeTone(2));
    expect(wav).toMatchObject({ durationS: 2, format: 'wav', startS: 0 });
    expect(wav.streams).toEqual([{ kind: 'audio', index: 0, codec: 'pcm_s16le', channels: 1, sampleRate: 16000 }]);
    const mp3 = await probe.probe(await makeSilence(2, { container: 'mp3', sampleRate: 44100, channels: 2 }));
    expect(mp3.format).toBe('mp3');
    expect(mp3.durationS).toBeCloseTo(2, 0);
    expect(mp3.streams).toEqual([{ kind: 'audio', index: 0, codec: 'mp3', channels: 2, sampleRate: 44100 }]);
  });

  it('falls back to ffmpeg for MPEG-TS, on which the npm ffprobe crashes', async () => {
    const clip = await makeVideo([{ durationS: 2, color: 'blue' }], { width: 320, height: 240, container: 'ts' });
    const info = await probe.probe(clip);
    expect(info.format).toBe('mpegts');
    expect(info.durationS).toBeCloseTo(2, 0);
    expect(info.streams).toEqual([{ kind: 'video', index: 0, codec: 'h264', width: 320, height: 240, fps: 25 }]);
  });

  it.each([
    ['random bytes', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 251))],
    ['text', Buffer.from('hello, this is not a video\n'.repeat(20))],
    ['an empty buffer', Buffer.alloc(0)],
    ['a JSON document', Buffer.from(JSON.stringify({ video: true }))],
  ])('rejects %s as invalid_media', async (_name, bytes) => {
    await expect(probe.probe(bytes)).rejects.toMatchObject(invalidMedia);
  });

  it('rejects a truncated MP4 and a still image without leaking temp paths', async () => {
    const clip = await makeVideo([{ durationS: 2 }], { width: 160, height: 120 });
    const err = (await probe.probe(clip.subarray(0, 2000)).catch((e: unknown) => e)) as Error;
    expect(err).toMatchObject(invalidMedia);
    expect(err.message).not.toMatch(/prism-media|\/tmp/);
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
      'base64',
    );
    await expect(probe.probe(png)).rejects.toMatchObject({
      ...invalidMedia,
      message: expect.stringMatching(/png/) as unknown,
    });
  });

  it('refuses text before any tool reads it, so playlists cannot make ffmpeg open other files', async () => {
    const playlist = Buffer.from('#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n/etc/passwd\n#EXT-X-ENDLIST\n');
    await expect(probe.probe(playlist)).rejects.toMatchObject({
      ...invalidMedia,
      message: expect.stringMatching(/text/) as unknown,
    });
    expect(looksLikeText(Buffer.from('ffconcat version 1.0\nfile /srv/a.mp4\n'))).toBe(true);
    expect(looksLikeText(await makeTone(0.1))).toBe(false);
    expect(looksLikeText(await makeSilence(0.5, { container: 'mp3' }))).toBe(false);
  });

  it('removes its temp files whether probing succeeds or fails', async () => {
    const tmpDir = await fs.mkdtemp(path.join(os.tmpdir(), 'probe-test-'));
    try {
      const local = createProbeEngine(mediaTools, { tmpDir });
      await local.probe(await makeTone(1));
      await expect(local.probe(Buffer.from('not media'))).rejects.toMatchObject(invalidMedia);
      expect(await fs.readdir(tmpDir)).toEqual([]);
    } finally {
      await fs.rm(tmpDir, { recursive: true, force: true });
    }
  });
});
