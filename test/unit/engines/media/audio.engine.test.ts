/**
 * The audio engine on generated recordings: metadata, speech segments, honest transcripts and invalid input, with
 * the energy detector (silero.test.ts covers the model).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createAudioEngine, NO_TRANSCRIPT_MESSAGE } from '../../../../src/engines/media/audio.engine';
import type { SpeechSegment } from '../../../../src/engines/media/types';
import { makeSilence, makeSpeechLike, makeTone, makeVideo, mediaTools } from '../../../helpers/media-clips';

const BURSTS: [number, number][] = [
  [1, 2.5],
  [4, 5.5],
  [7, 8.5],
];
const invalidMedia = { status: 400, code: 'invalid_media' };

function expectSegmentsNear(segments: SpeechSegment[], bursts: [number, number][], tol = 0.35): void {
  expect(segments).toHaveLength(bursts.length);
  segments.forEach((seg, i) => {
    expect(Math.abs(seg.start_s - bursts[i]![0])).toBeLessThan(tol);
    expect(Math.abs(seg.end_s - bursts[i]![1])).toBeLessThan(tol);
  });
}

let speech: Buffer;
let emptyDir: string;
beforeAll(async () => {
  speech = await makeSpeechLike(10, BURSTS);
  emptyDir = await fs.mkdtemp(path.join(os.tmpdir(), 'no-silero-'));
});
afterAll(() => fs.rm(emptyDir, { recursive: true, force: true }));

describe('audio engine with the energy detector', () => {
  const engine = createAudioEngine({ tools: mediaTools, vad: 'energy' });

  it('reports metadata and speech segments, and never a transcript', async () => {
    const result = await engine.analyze(speech);
    expect(result).toMatchObject({
      durationS: 10,
      format: 'wav',
      codec: 'pcm_s16le',
      channels: 1,
      sampleRate: 16000,
      vad: 'energy',
      analyzedS: 10,
      transcript: null,
      transcriptMessage: NO_TRANSCRIPT_MESSAGE,
    });
    expect(result.vadNote).toBeUndefined();
    expectSegmentsNear(result.speechSegments, BURSTS);
    expect(result.speechS).toBeGreaterThan(4);
    expect(result.speechS).toBeLessThan(6);
  });

  it('decodes compressed stereo audio to the same segments', async () => {
    const mp3 = await makeSpeechLike(10, BURSTS, { container: 'mp3', sampleRate: 44100, channels: 2 });
    const result = await engine.analyze(mp3);
    expect(result).toMatchObject({ format: 'mp3', codec: 'mp3', channels: 2, sampleRate: 44100 });
    expectSegmentsNear(result.speechSegments, BURSTS);
  });

  it('finds no speech in a tone or in silence', async () => {
    expect((await engine.analyze(await makeTone(3))).speechSegments).toEqual([]);
    expect((await engine.analyze(await makeSilence(3, { container: 'm4a' }))).speechSegments).toEqual([]);
  });

  it('analyses the audio track of a video', async () => {
    const clip = await makeVideo([{ durationS: 2, color: 'green' }], { withTone: true });
    const result = await engine.analyze(clip);
    expect(result).toMatchObject({ codec: 'aac', channels: 1, sampleRate: 48000, speechSegments: [] });
    expect(result.durationS).toBeCloseTo(2, 1);
  });

  it('decodes only the first maxAnalysisS seconds', async () => {
    const short = createAudioEngine({ tools: mediaTools, vad: 'energy', maxAnalysisS: 3 });
    const result = await short.analyze(speech);
    expect(result.durationS).toBe(10);
    expect(result.analyzedS).toBe(3);
    expectSegmentsNear(result.speechSegments, [[1, 2.5]]);
  });

  it('rejects a silent video, corrupt audio and non-media as invalid_media', async () => {
    const silentVideo = await makeVideo([{ durationS: 1 }], { width: 160, height: 120 });
    await expect(engine.analyze(silentVideo)).rejects.toMatchObject({
      ...invalidMedia,
      message: expect.stringMatching(/no audio stream/) as unknown,
    });
    const mp3 = await makeTone(2, 440, { container: 'mp3' });
    await expect(engine.analyze(mp3.subarray(0, 300))).rejects.toMatchObject(invalidMedia);
    await expect(engine.analyze(Buffer.from('RIFF....WAVEnot really'))).rejects.toMatchObject(invalidMedia);
    await expect(engine.analyze(Buffer.alloc(0))).rejects.toMatchObject(invalidMedia);
  });
});

describe('detector choice when the Silero packages are missing', () => {
  it('auto falls back to the energy detector and says why', async () => {
    const engine = createAudioEngine({ tools: mediaTools, sileroResolvePaths: [emptyDir] });
    const result = await engine.analyze(speech);
    expect(result.vad).toBe('energy');
    expect(result.vadNote).toMatch(/@ricky0123\/vad-node/);
    expectSegmentsNear(result.speechSegments, BURSTS);
    await engine.close();
  });

  it('silero fails loudly, naming the packages to install', async () => {
    const engine = createAudioEngine({ tools: mediaTools, vad: 'silero', sileroResolvePaths: [emptyDir] });
    await expect(engine.analyze(speech)).rejects.toThrow(/@ricky0123\/vad-node.*onnxruntime-node/);
  });
});
