/**
 * Turns per-frame speech scores into speech segments; shared by the Silero and the energy detectors.
 *
 * Raw frame decisions flicker. Hysteresis (enter above `threshold`, leave below `negThreshold`), merging of short
 * pauses, dropping of short blips and a little padding give segments that match what a listener calls speech.
 */
import type { SpeechSegment } from './types';

/** Smoothing parameters, all in seconds except the two score thresholds (0..1). */
export interface SegmentOptions {
  threshold: number;
  negThreshold: number;
  /** Segments shorter than this (after merging) are dropped. */
  minSpeechS: number;
  /** Pauses shorter than this are bridged. */
  minSilenceS: number;
  /** Added before and after each segment, clamped to the audio. */
  padS: number;
}

export const DEFAULT_SEGMENT_OPTIONS: SegmentOptions = {
  threshold: 0.5,
  negThreshold: 0.35,
  minSpeechS: 0.25,
  minSilenceS: 0.3,
  padS: 0.05,
};

/** Scores for consecutive frames of `frameS` seconds each → segments within [0, totalS]. */
export function scoresToSegments(
  scores: ArrayLike<number>,
  frameS: number,
  totalS: number,
  opts: SegmentOptions = DEFAULT_SEGMENT_OPTIONS,
): SpeechSegment[] {
  const raw: [number, number][] = [];
  let start = -1;
  for (let i = 0; i < scores.length; i++) {
    const score = scores[i] ?? 0;
    if (start < 0 && score >= opts.threshold) start = i;
    else if (start >= 0 && score < opts.negThreshold) {
      raw.push([start * frameS, i * frameS]);
      start = -1;
    }
  }
  if (start >= 0) raw.push([start * frameS, scores.length * frameS]);

  const merged: [number, number][] = [];
  for (const seg of raw) {
    const last = merged.at(-1);
    if (last && seg[0] - last[1] < opts.minSilenceS) last[1] = seg[1];
    else merged.push([seg[0], seg[1]]);
  }
  const padded: [number, number][] = [];
  for (const [s, e] of merged.filter(([s, e]) => e - s >= opts.minSpeechS)) {
    const seg: [number, number] = [Math.max(0, s - opts.padS), Math.min(totalS, e + opts.padS)];
    const last = padded.at(-1);
    if (last && seg[0] <= last[1]) last[1] = seg[1];
    else padded.push(seg);
  }
  return padded.map(([s, e]) => ({ start_s: round3(s), end_s: round3(e) }));
}

/** Total seconds covered by `segments`. */
export function speechSeconds(segments: readonly SpeechSegment[]): number {
  return round3(segments.reduce((sum, s) => sum + (s.end_s - s.start_s), 0));
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
