/**
 * Where a CTC reading breaks into words, shared by greedy decoding (ppocr-recognize.ts) and the beam search
 * (ctc-beam.ts), so both read the same words and differ only in their letters.
 *
 * The recogniser rarely lets its space class win on tightly printed receipts; two signs of a gap are used:
 * - the space class's probability peaking between two characters (`spaceThreshold`, as before);
 * - the gap itself: the run of blank steps between two characters, against the crop's own pitch (the mean step
 *   distance between consecutive characters), so a print's word gap reads as a space whatever its font size. Beside
 *   a colon the gap needed is smaller (`colonGapSteps`): a colon is narrow, so a spaced `TEL : 07-…` leaves fewer
 *   blank steps beside it than between two words.
 * Measured with the reader bench's word F1 (docs/extraction-accuracy.md, "Where words break"): tuned on sroie-dev2,
 * greedy decoding went 0.816 → 0.831 there and 0.825 → 0.847 on sroie-dev, which the settings were not chosen on.
 */
import type { CtcSteps } from './ppocr-models';

export interface WordBreakSettings {
  /** A space between two characters where the space class's probability reaches this (default 0.1). */
  spaceThreshold: number;
  /** A space where the blank steps between two characters reach this many … (default 4) */
  gapSteps: number;
  /** … and this many times the crop's mean character pitch in steps (default 1.3) … */
  gapPitch: number;
  /**
   * … and the blank won each of those steps with at least this probability (default 0.8): a gap left by a faint
   * character the recogniser half saw (`Hardwa e` for a pale `r`) is not a word gap.
   */
  gapCertainty: number;
  /**
   * A space beside a colon where the blank steps reach this many (default 3) and exceed the crop's usual blank
   * between two characters (its median) by this many (default 1), unless the colon stands between two digits
   * (`18:42`). The margin keeps monospaced print, where a colon sits in a whole cell with the same blanks as any
   * letter, from reading `Date : 14/03`.
   */
  colonGapSteps: number;
  colonGapMargin: number;
}

export const DEFAULT_WORD_BREAKS: WordBreakSettings = {
  spaceThreshold: 0.1,
  gapSteps: 4,
  gapPitch: 1.3,
  gapCertainty: 0.8,
  colonGapSteps: 3,
  colonGapMargin: 1,
};

/** Only the space-probability rule: how readings were split before the gap rules (the reader bench's `--breaks`). */
export const SPACE_PROBABILITY_ONLY: WordBreakSettings = {
  spaceThreshold: 0.1,
  gapSteps: Number.POSITIVE_INFINITY,
  gapPitch: 0,
  gapCertainty: 1,
  colonGapSteps: Number.POSITIVE_INFINITY,
  colonGapMargin: 0,
};

/** One run of greedy decoding's winners (blank excluded): its class and steps, and the space peak before it. */
export interface CharRun {
  cls: number;
  first: number;
  last: number;
  /** The space class's highest probability since the previous run ended. */
  spaceBefore: number;
  /** The lowest probability with which the blank won a step since the previous run ended (1 when none did). */
  blankFloor: number;
}

/** Greedy decoding's character runs of crop `i`: a new run wherever the winning class changes to a non-blank. */
export function charRuns(out: CtcSteps, i: number): CharRun[] {
  const runs: CharRun[] = [];
  let previous = -1;
  let spacePeak = 0;
  let blankFloor = 1;
  for (let t = 0; t < out.steps; t += 1) {
    const s = i * out.steps + t;
    spacePeak = Math.max(spacePeak, out.space[s] as number);
    const best = out.best[s] as number;
    if (best === 0) blankFloor = Math.min(blankFloor, out.bestP[s] as number);
    if (best !== 0 && best !== previous) {
      runs.push({ cls: best, first: t, last: t, spaceBefore: spacePeak, blankFloor });
      spacePeak = 0;
      blankFloor = 1;
    } else if (best !== 0 && best === previous) {
      (runs[runs.length - 1] as CharRun).last = t;
    }
    previous = best;
  }
  return runs;
}

/**
 * For each run, whether a word break comes before it (never before the first run, nor before or after a run of the
 * space class itself, which is a break of its own).
 */
export function breaksBefore(
  runs: readonly CharRun[],
  alphabet: readonly string[],
  spaceClass: number,
  settings: WordBreakSettings,
): boolean[] {
  const kind = classKinds(alphabet);
  const pitch = meanPitch(runs, spaceClass);
  const wide = Math.max(settings.gapSteps, settings.gapPitch * pitch);
  const colonGap = Math.max(settings.colonGapSteps, medianBlank(runs, spaceClass) + settings.colonGapMargin);
  const digit = (k: number): boolean => kind.get(runs[k]?.cls ?? -1) === 'digit';
  const colon = (k: number): boolean => kind.get(runs[k]?.cls ?? -1) === 'colon';
  return runs.map((run, k) => {
    const before = runs[k - 1];
    if (!before || run.cls === spaceClass || before.cls === spaceClass) return false;
    if (run.spaceBefore >= settings.spaceThreshold) return true;
    const blank = run.first - before.last - 1;
    if (blank >= wide && run.blankFloor >= settings.gapCertainty) return true;
    // The colon is run k (break before it) or run k - 1 (break after it); the runs either side of it are the digits.
    const at = colon(k) ? k : colon(k - 1) ? k - 1 : -1;
    return at >= 0 && blank >= colonGap && !(digit(at - 1) && digit(at + 1));
  });
}

/** The median run of blank steps between two consecutive non-space runs (1 when there are none). */
function medianBlank(runs: readonly CharRun[], spaceClass: number): number {
  const blanks: number[] = [];
  for (let k = 1; k < runs.length; k += 1) {
    const [a, b] = [runs[k - 1] as CharRun, runs[k] as CharRun];
    if (a.cls !== spaceClass && b.cls !== spaceClass) blanks.push(b.first - a.last - 1);
  }
  if (blanks.length === 0) return 1;
  blanks.sort((x, y) => x - y);
  const mid = blanks.length >> 1;
  return blanks.length % 2 === 1
    ? (blanks[mid] as number)
    : ((blanks[mid - 1] as number) + (blanks[mid] as number)) / 2;
}

/**
 * The crop's character pitch: the mean step distance between the starts of consecutive non-space runs (3 when there
 * are none). The mean rather than the median: on a short word of wide and narrow letters (`EXIT`) the median is a
 * narrow letter's, and a wide letter's gap would read as a word gap.
 */
function meanPitch(runs: readonly CharRun[], spaceClass: number): number {
  let sum = 0;
  let count = 0;
  for (let k = 1; k < runs.length; k += 1) {
    const [a, b] = [runs[k - 1] as CharRun, runs[k] as CharRun];
    if (a.cls === spaceClass || b.cls === spaceClass) continue;
    sum += b.first - a.first;
    count += 1;
  }
  return count === 0 ? 3 : sum / count;
}

const kindsByAlphabet = new WeakMap<readonly string[], Map<number, 'colon' | 'digit'>>();

/** The classes of `alphabet` that are a colon or a digit (ASCII or full-width, as NFKC folds them), found once. */
function classKinds(alphabet: readonly string[]): Map<number, 'colon' | 'digit'> {
  let kinds = kindsByAlphabet.get(alphabet);
  if (!kinds) {
    kinds = new Map();
    for (const [cls, ch] of alphabet.entries()) {
      const folded = ch.normalize('NFKC');
      if (folded === ':') kinds.set(cls, 'colon');
      else if (/^[0-9]$/.test(folded)) kinds.set(cls, 'digit');
    }
    kindsByAlphabet.set(alphabet, kinds);
  }
  return kinds;
}
