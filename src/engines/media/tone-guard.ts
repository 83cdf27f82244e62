/**
 * Keeps steady pure tones (test tones, beeps, a whistle) from being reported as speech.
 *
 * Silero VAD is trained on speech and noise, not on synthetic tones: a loud sine can score above 0.5 for a second or
 * more at its onset, and how long depends on tiny quantisation differences. A tone is easy to recognise with the
 * energy detector's features (one spectral peak holding almost all the power), so Silero's score is zeroed for
 * frames that are mostly pure tone.
 */
import { DEFAULT_ENERGY_VAD, frameFeatures, type EnergyVadOptions } from './energy-vad';

/** Zeroes the scores of frames (each `frameS` long) in which most of the audio is a single pure tone. */
export function suppressPureTones(
  scores: Float32Array,
  frameS: number,
  pcm: Float32Array,
  sampleRate: number,
  opts: EnergyVadOptions = DEFAULT_ENERGY_VAD,
): Float32Array {
  const f = frameFeatures(pcm, sampleRate);
  const hopS = f.hopSamples / sampleRate;
  const out = Float32Array.from(scores);
  for (let i = 0; i < out.length; i++) {
    const first = Math.floor((i * frameS) / hopS);
    const last = Math.min(f.energyDb.length, Math.ceil(((i + 1) * frameS) / hopS));
    let tonal = 0;
    for (let j = first; j < last; j++) {
      if (f.energyDb[j]! >= opts.absoluteFloorDb && f.peakShare[j]! > opts.maxPeakShare) tonal++;
    }
    if (last > first && tonal * 2 > last - first) out[i] = 0;
  }
  return out;
}
