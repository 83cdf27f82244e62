/**
 * Frame sampling, scene cuts and OCR layout on generated clips. Only counts, timestamps (with tolerances) and error
 * codes are asserted, never how long anything took.
 */
import sharp from 'sharp';
import type { LayoutPage } from '../../../../src/engines/types';
import type { FrameRecognizer } from '../../../../src/engines/media/types';
import { clampSampling, createVideoEngine, effectiveFps } from '../../../../src/engines/media/video.engine';
import { makeTone, makeVideo, mediaTools } from '../../../helpers/media-clips';

const engine = createVideoEngine({ tools: mediaTools });
const invalidMedia = { status: 400, code: 'invalid_media' };
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

let cut: Buffer; // 4 s red "SLIDE ONE", then 6 s blue "SLIDE TWO", with a tone track
beforeAll(async () => {
  cut = await makeVideo(
    [
      { durationS: 4, color: 'red', text: ['SLIDE ONE'], textColor: 'white' },
      { durationS: 6, color: 'blue', text: ['SLIDE TWO'], textColor: 'white' },
    ],
    { withTone: true },
  );
});

describe('sampleFrames', () => {
  it('samples one PNG per second with its timestamp and finds the cut', async () => {
    const video = await engine.sampleFrames(cut, { fps: 1, maxFrames: 16 });
    expect(video.durationS).toBeCloseTo(10, 1);
    expect(video.hasAudio).toBe(true);
    expect(video.effectiveFps).toBe(1);
    expect(video.frames).toHaveLength(10);
    video.frames.forEach((frame, i) => {
      expect(frame.index).toBe(i);
      expect(frame.timeS).toBeCloseTo(i, 1);
      expect(frame.png.subarray(0, 4).equals(PNG_SIGNATURE)).toBe(true);
      expect([frame.width, frame.height]).toEqual([640, 360]);
    });
    expect(video.sceneChangesS).toHaveLength(1);
    expect(video.sceneChangesS[0]).toBeCloseTo(4, 1);
  });

  it('can skip scene detection', async () => {
    const video = await engine.sampleFrames(cut, { fps: 0.5, detectScenes: false });
    expect(video.frames.map((f) => f.timeS)).toEqual([0, 2, 4, 6, 8].map((t) => expect.closeTo(t, 1) as unknown));
    expect(video.sceneChangesS).toEqual([]);
  });

  it('spreads maxFrames over the whole clip instead of stopping early', async () => {
    const video = await engine.sampleFrames(cut, { fps: 1, maxFrames: 4 });
    expect(video.effectiveFps).toBeCloseTo(0.4, 5);
    expect(video.frames.map((f) => f.timeS)).toEqual([0, 2.5, 5, 7.5].map((t) => expect.closeTo(t, 1) as unknown));
  });

  it('samples faster rates and scales wide frames down', async () => {
    const clip = await makeVideo([{ durationS: 3, color: 'testsrc' }], { width: 640, height: 360 });
    const video = await engine.sampleFrames(clip, { fps: 2, maxFrames: 100, maxWidth: 320 });
    expect(video.frames).toHaveLength(6);
    expect(video.frames[5]?.timeS).toBeCloseTo(2.5, 1);
    expect(video.frames.every((f) => f.width === 320 && f.height === 180)).toBe(true);
    expect(video.hasAudio).toBe(false);
  });

  it('reports no scene change on a clip without cuts, and reads WebM and MPEG-TS', async () => {
    for (const container of ['webm', 'ts'] as const) {
      const clip = await makeVideo([{ durationS: 2, color: 'white', text: ['STILL'] }], { container });
      const video = await engine.sampleFrames(clip);
      expect(video.frames).toHaveLength(2);
      expect(video.frames[0]?.timeS).toBe(0);
      expect(video.sceneChangesS).toEqual([]);
    }
  });

  it('rejects audio-only, corrupt and empty input as invalid_media', async () => {
    await expect(engine.sampleFrames(await makeTone(1))).rejects.toMatchObject({
      ...invalidMedia,
      message: expect.stringMatching(/no video stream/) as unknown,
    });
    await expect(engine.sampleFrames(cut.subarray(0, cut.length >> 2))).rejects.toMatchObject(invalidMedia);
    await expect(engine.sampleFrames(Buffer.alloc(0))).rejects.toMatchObject(invalidMedia);
  });
});

describe('videoLayout', () => {
  /** A stand-in for the OCR engine: names the frame's background colour, as if that were the text on it. */
  const colourOcr: FrameRecognizer = {
    async recognize(png: Buffer): Promise<LayoutPage> {
      const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
      const [r = 0, , b = 0] = data.subarray(data.length - info.channels);
      const text = r > b ? 'SLIDE ONE' : 'SLIDE TWO';
      const box = { x0: 0, y0: 0, x1: 10, y1: 10 };
      return {
        index: 0,
        width: info.width,
        height: info.height,
        source: 'ocr',
        status: 'ok',
        lines: [{ text, box, confidence: 0.9, words: [{ text, box, confidence: 0.9 }] }],
      };
    },
  };

  it('OCRs the frames and keeps one page per change of text, with its time', async () => {
    const layout = await engine.videoLayout(cut, { fps: 1 }, colourOcr);
    expect(layout.framesSampled).toBe(10);
    expect(layout.durationS).toBeCloseTo(10, 1);
    expect(layout.sceneChangesS).toHaveLength(1);
    expect(layout.pages.map((p) => [p.index, p.lines[0]?.text])).toEqual([
      [0, 'SLIDE ONE'],
      [1, 'SLIDE TWO'],
    ]);
    expect(layout.pages[0]?.timeS).toBe(0);
    expect(layout.pages[1]?.timeS).toBeCloseTo(4, 1);
  });
});

describe('sampling bounds', () => {
  it('fills defaults and clamps out-of-range values', () => {
    expect(clampSampling({})).toEqual({
      fps: 1,
      maxFrames: 16,
      sceneThreshold: 0.3,
      maxWidth: 1280,
      detectScenes: true,
    });
    expect(clampSampling({ fps: 1000, maxFrames: 10_000, sceneThreshold: 5, maxWidth: 1 })).toEqual({
      fps: 30,
      maxFrames: 128,
      sceneThreshold: 1,
      maxWidth: 16,
      detectScenes: true,
    });
    expect(clampSampling({ fps: Number.NaN, maxFrames: 0 })).toMatchObject({ fps: 1, maxFrames: 1 });
  });

  it('lowers the rate only when the clip is too long for maxFrames', () => {
    expect(effectiveFps(1, 16, 10)).toBe(1);
    expect(effectiveFps(1, 16, null)).toBe(1);
    expect(effectiveFps(2, 16, 64)).toBe(0.25);
    expect(effectiveFps(1, 1, 1e9)).toBe(0.01);
  });
});
