/**
 * The pieces of voice-activity detection that need no ffmpeg and no model: segment smoothing, the energy detector,
 * the pure-tone guard and the FFT under them, on synthetic PCM.
 */
import { energyVadScores } from '../../../../src/engines/media/energy-vad';
import { createPowerSpectrum } from '../../../../src/engines/media/fft';
import { suppressPureTones } from '../../../../src/engines/media/tone-guard';
import { scoresToSegments, speechSeconds } from '../../../../src/engines/media/vad-segments';
import type { SpeechSegment } from '../../../../src/engines/media/types';
import { speechLikePcm, tonePcm } from '../../../helpers/media-clips';

const SR = 16_000;
const BURSTS: [number, number][] = [
  [1, 2.5],
  [4, 5.5],
  [7, 8.5],
];

/** Each burst is found once, its edges within `tol` seconds. */
function expectSegmentsNear(segments: SpeechSegment[], bursts: [number, number][], tol = 0.35): void {
  expect(segments).toHaveLength(bursts.length);
  segments.forEach((seg, i) => {
    expect(Math.abs(seg.start_s - bursts[i]![0])).toBeLessThan(tol);
    expect(Math.abs(seg.end_s - bursts[i]![1])).toBeLessThan(tol);
  });
}

describe('scoresToSegments', () => {
  const opts = { threshold: 0.5, negThreshold: 0.35, minSpeechS: 0.3, minSilenceS: 0.3, padS: 0 };

  it('enters above the threshold and leaves only below the lower one', () => {
    const scores = [0, 0.6, 0.4, 0.4, 0.36, 0.2, 0, 0, 0, 0];
    expect(scoresToSegments(scores, 0.1, 1, opts)).toEqual([{ start_s: 0.1, end_s: 0.5 }]);
  });

  it('bridges short pauses, drops short blips and pads within the audio', () => {
    const scores = [0.9, 0.9, 0.9, 0, 0, 0.9, 0.9, 0, 0, 0, 0, 0, 0.9, 0, 0, 0, 0, 0, 0.9, 0.9, 0.9, 0.9];
    expect(scoresToSegments(scores, 0.1, 2.2, opts)).toEqual([
      { start_s: 0, end_s: 0.7 },
      { start_s: 1.8, end_s: 2.2 },
    ]);
    const padded = scoresToSegments(scores, 0.1, 2.2, { ...opts, padS: 0.5 });
    expect(padded).toEqual([
      { start_s: 0, end_s: 1.2 },
      { start_s: 1.3, end_s: 2.2 },
    ]);
    expect(speechSeconds(padded)).toBe(2.1);
  });

  it('finds nothing in nothing', () => {
    expect(scoresToSegments([], 0.1, 0)).toEqual([]);
    expect(scoresToSegments(new Float32Array(100), 0.1, 10)).toEqual([]);
  });
});

describe('energy detector', () => {
  const segmentsOf = (pcm: Float32Array): SpeechSegment[] => {
    const { scores, frameS } = energyVadScores(pcm, SR);
    return scoresToSegments(scores, frameS, pcm.length / SR);
  };

  it('finds speech-like bursts where they are', () => {
    expectSegmentsNear(segmentsOf(speechLikePcm(10, BURSTS, SR)), BURSTS);
  });

  it('still finds them under steady background noise', () => {
    expectSegmentsNear(segmentsOf(speechLikePcm(10, BURSTS, SR, 0.02)), BURSTS);
  });

  it('finds no speech in silence, a steady tone, a tone burst or plain noise', () => {
    expect(segmentsOf(new Float32Array(5 * SR))).toEqual([]);
    expect(segmentsOf(tonePcm(5, 440, SR))).toEqual([]);
    const burst = new Float32Array(8 * SR);
    burst.set(tonePcm(2, 300, SR), 3 * SR);
    expect(segmentsOf(burst)).toEqual([]);
    expect(segmentsOf(speechLikePcm(5, [], SR, 0.3))).toEqual([]);
  });

  it('returns no frames for audio shorter than one frame', () => {
    expect(energyVadScores(new Float32Array(100), SR).scores).toHaveLength(0);
  });
});

describe('suppressPureTones', () => {
  it('zeroes scores over a tone and keeps them over speech', () => {
    const frameS = 0.096;
    const tone = suppressPureTones(new Float32Array(30).fill(0.9), frameS, tonePcm(3, 440, SR), SR);
    expect(Array.from(tone).every((s) => s === 0)).toBe(true);
    const speech = speechLikePcm(3, [[0, 3]], SR);
    const kept = suppressPureTones(new Float32Array(30).fill(0.9), frameS, speech, SR);
    expect(kept.filter((s) => s > 0).length).toBeGreaterThan(25);
  });
});

describe('createPowerSpectrum', () => {
  it('puts a sine at its bin', () => {
    const fft = createPowerSpectrum(256);
    const frame = Float32Array.from({ length: 256 }, (_, n) => Math.sin((2 * Math.PI * 10 * n) / 256));
    const power = Array.from(fft.compute(frame));
    expect(power.indexOf(Math.max(...power))).toBe(10);
    expect(power[10]).toBeCloseTo(128 * 128, 3);
    expect(() => createPowerSpectrum(300)).toThrow(/power of two/);
  });
});
