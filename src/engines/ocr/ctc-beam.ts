/**
 * Beam CTC decoding with a language model, the alternative to greedy decoding (ppocr-recognize.ts) that the
 * recogniser's per-step top-k classes make possible. Greedy decoding keeps each step's winner and so writes
 * `SHAH ALAN` when the `M` was a close second; here each word is decoded again by a CTC prefix beam search whose
 * score adds a character trigram model and a lexicon bonus (reader-lm.ts) to the optical log probability:
 *
 *   score(prefix) = log P_ctc(prefix | steps) + lmWeight · log P_lm(prefix) + charBonus · |prefix|
 *                   (+ lmWeight · log P_lm(end | prefix) + lexiconBonus when a finished word is in the lexicon)
 *
 * - Words and spaces are those of greedy decoding (the same space rule), so only the characters inside a word can
 *   change; each word is searched over its own span of time steps (from after the previous word's last character to
 *   before the next word's first), which keeps the beam short and the cost small.
 * - Only classes the page's script allows are candidates (`latinClasses`: what folds to printable ASCII on a Latin
 *   page), so a CJK look-alike never lands in Latin text; a page in another script is left to greedy decoding.
 * - Digits are one symbol to the trigram model: in a numeric context a digit is likelier than a letter, but which
 *   digit is always the recogniser's choice; punctuation is not scored at all (reader-lm.ts).
 * - The lexicon bonus is bounded: a word the recogniser is sure of (its alternatives far below) stays as read.
 * - The probability outside the top k is not seen; the blank's, when not among them, is taken as what remains.
 */
import { breaksBefore, charRuns, DEFAULT_WORD_BREAKS, type WordBreakSettings } from './ctc-word-breaks';
import type { CtcSteps } from './ppocr-models';
import type { CtcReading } from './ppocr-recognize';
import { MARK, symbolOf, WORD_END, WORD_START, type ReaderLanguageModel } from './reader-lm';

export interface BeamSettings {
  /** Prefixes kept per time step (default 8). */
  beamWidth: number;
  /** Weight of the character model's log probability (default 0.3). */
  lmWeight: number;
  /** Added, in nats, to a finished word found in the lexicon (default 2). */
  lexiconBonus: number;
  /** Added per character, against the character model's preference for short words (default 0.5). */
  charBonus: number;
  /**
   * A word is searched only when some step offers a second allowed character at this probability or more (default
   * 0.05; 0 searches every word): the others stay as greedy decoding read them, which saves most of the cost.
   */
  doubt: number;
  /**
   * Take the search's spelling only when it is a lexicon word and greedy's is not, or it reads digits where greedy
   * read letters in a numeric word, or greedy's held a character the page's script does not (default true). Without
   * the guard the character model also respells names (`TEO` → `TED`, `MALURI` → `MALURD`), which costs the company
   * field more than it gains.
   */
  guarded: boolean;
}

export const DEFAULT_BEAM_SETTINGS: BeamSettings = {
  beamWidth: 8,
  lmWeight: 0.3,
  lexiconBonus: 2,
  charBonus: 0.5,
  doubt: 0.05,
  guarded: true,
};

const digitsOf = (text: string): number => (text.match(/[0-9]/g) ?? []).length;
const lettersOf = (text: string): number => (text.match(/[A-Za-z]/g) ?? []).length;

/** Whether the guard (BeamSettings.guarded) lets the search's spelling replace greedy decoding's. */
function acceptable(greedy: string, searched: string, foreign: boolean, lm: ReaderLanguageModel): boolean {
  if (searched === greedy) return true;
  if (foreign) return true;
  if (lm.inLexicon(greedy)) return false;
  if (lm.inLexicon(searched)) return true;
  const folded = searched.normalize('NFKC');
  const greedyFolded = greedy.normalize('NFKC');
  return (
    digitsOf(folded) > digitsOf(greedyFolded) &&
    digitsOf(folded) >= lettersOf(folded) &&
    !digitsEnterLetterRun(greedyFolded, folded)
  );
}

const alphanumericRuns = (text: string): string[] => text.split(/[^A-Za-z0-9]+/).filter(Boolean);

/**
 * Whether the respelling puts digits into a run of letters that greedy read between marks: a number's letter suffix
 * (`(1125830-U)`, the company-number check letter) is a word of its own, not a misread digit, even though the word
 * as a whole is numeric. Only runs that line up one for one are compared; a respelling that moves the marks is
 * judged by the counts alone.
 */
function digitsEnterLetterRun(greedy: string, searched: string): boolean {
  const [before, after] = [alphanumericRuns(greedy), alphanumericRuns(searched)];
  if (before.length !== after.length) return false;
  return before.some((run, i) => digitsOf(run) === 0 && digitsOf(after[i] ?? '') > 0);
}

/** The classes of `alphabet` a Latin page may hold: the blank and those that fold (NFKC) to printable ASCII. */
export function latinClasses(alphabet: readonly string[]): Uint8Array {
  const mask = new Uint8Array(alphabet.length);
  alphabet.forEach((ch, i) => {
    const folded = ch.normalize('NFKC');
    mask[i] = i === 0 || (folded.length > 0 && /^[\x20-\x7e]+$/.test(folded)) ? 1 : 0;
  });
  return mask;
}

/** Whether readings are of a Latin page: at least 90 % of their letters are ASCII letters (after NFKC). */
export function isLatinPage(readings: readonly CtcReading[]): boolean {
  let latin = 0;
  let letters = 0;
  for (const r of readings) {
    for (const ch of r.text.normalize('NFKC')) {
      if (/\p{L}/u.test(ch)) {
        letters += 1;
        if (/[A-Za-z]/.test(ch)) latin += 1;
      }
    }
  }
  return letters === 0 || latin >= 0.9 * letters;
}

interface Prefix {
  text: string;
  /** Class of the last character (-1 for none). */
  last: number;
  /** Symbols of the last two characters for the character model. */
  s2: number;
  s1: number;
  lm: number;
  /** Letters and digits emitted (the character bonus counts these; marks are not scored by the model). */
  alnum: number;
  /** log P of the paths ending in a blank / in the last character. */
  pb: number;
  pnb: number;
  /** Class and time step of each character emitted. */
  classes: number[];
  steps: number[];
}

const NEG = -Infinity;

function logAdd(a: number, b: number): number {
  if (a === NEG) return b;
  if (b === NEG) return a;
  const m = a > b ? a : b;
  return m + Math.log(Math.exp(a - m) + Math.exp(b - m));
}

/** One greedy word: its characters' classes and steps, and the steps of its first and last character run. */
interface GreedyWord {
  /** Time step greedy decoding gives the space before the word (the space class's, else the first character's). */
  separator: number;
  classes: number[];
  steps: number[];
  first: number;
  runEnd: number;
}

/** Greedy CTC decoding of crop `i` into words and separators (the word breaks of `decodeCtcSteps`). */
function greedyWords(
  out: CtcSteps,
  i: number,
  alphabet: readonly string[],
  spaceClass: number,
  breaks: WordBreakSettings,
): GreedyWord[] {
  const runs = charRuns(out, i);
  const broken = breaksBefore(runs, alphabet, spaceClass, breaks);
  const words: GreedyWord[] = [];
  let current: GreedyWord | undefined;
  let spaceAt = -1;
  runs.forEach((run, k) => {
    if (run.cls === spaceClass || broken[k]) current = undefined;
    if (run.cls === spaceClass) {
      if (spaceAt < 0) spaceAt = run.first;
      return;
    }
    if (!current) {
      current = {
        separator: spaceAt >= 0 ? spaceAt : run.first,
        classes: [],
        steps: [],
        first: run.first,
        runEnd: run.last,
      };
      spaceAt = -1;
      words.push(current);
    }
    current.classes.push(run.cls);
    current.steps.push(run.first);
    current.runEnd = run.last;
  });
  return words;
}

/**
 * Whether greedy decoding's word over steps [from, to] stands as read: each of its classes is allowed and no step
 * offers another allowed character at `doubt` or more, so no beam could choose differently by more than a rounding.
 */
function beyondDoubt(
  out: CtcSteps,
  i: number,
  word: GreedyWord,
  from: number,
  to: number,
  allowed: Uint8Array,
  spaceClass: number,
  doubt: number,
): boolean {
  if (doubt <= 0 || word.classes.some((c) => !allowed[c])) return false;
  const top = out.top as NonNullable<CtcSteps['top']>;
  for (let t = from; t <= to; t += 1) {
    const at = (i * out.steps + t) * top.k;
    for (let j = 1; j < top.k; j += 1) {
      const c = top.index[at + j] as number;
      if (c !== 0 && c !== spaceClass && allowed[c] && (top.p[at + j] as number) >= doubt) return false;
    }
  }
  return true;
}

/** The best word over steps [from, to] of crop `i`, or undefined when the beam finds nothing non-empty. */
function searchWord(
  out: CtcSteps,
  i: number,
  from: number,
  to: number,
  alphabet: readonly string[],
  allowed: Uint8Array,
  spaceClass: number,
  lm: ReaderLanguageModel,
  settings: BeamSettings,
): { classes: number[]; steps: number[] } | undefined {
  const top = out.top as NonNullable<CtcSteps['top']>;
  const { k } = top;
  let beam: Prefix[] = [
    { text: '', last: -1, s2: WORD_START, s1: WORD_START, lm: 0, alnum: 0, pb: 0, pnb: NEG, classes: [], steps: [] },
  ];
  const score = (p: Prefix): number => logAdd(p.pb, p.pnb) + settings.lmWeight * p.lm + settings.charBonus * p.alnum;
  for (let t = from; t <= to; t += 1) {
    const at = (i * out.steps + t) * k;
    // The step's candidates: the blank (with the space class folded in: no space inside a word) and allowed classes.
    let blankP = 0;
    let seen = 0;
    const cls: number[] = [];
    const logp: number[] = [];
    for (let j = 0; j < k; j += 1) {
      const c = top.index[at + j] as number;
      const p = top.p[at + j] as number;
      seen += p;
      if (c === 0 || c === spaceClass) blankP += p;
      else if (allowed[c] && p > 1e-4) {
        cls.push(c);
        logp.push(Math.log(p));
      }
    }
    if (!top.index.subarray(at, at + k).includes(0)) blankP += Math.max(0, 1 - seen);
    const logBlank = Math.log(Math.max(blankP, 1e-6));
    const next = new Map<string, Prefix>();
    const entry = (from: Prefix, text: string, c: number): Prefix => {
      let e = next.get(text);
      if (!e) {
        if (c < 0) e = { ...from, pb: NEG, pnb: NEG };
        else {
          const sym = symbolOf(alphabet[c] ?? '');
          // A mark ends the run before it (scored as ended) and the next run starts afresh.
          const mark = sym === MARK;
          const ended = from.s1 === WORD_START ? 0 : lm.logP(from.s2, from.s1, WORD_END);
          e = {
            text,
            last: c,
            s2: mark ? WORD_START : from.s1,
            s1: mark ? WORD_START : sym,
            lm: from.lm + (mark ? ended : lm.logP(from.s2, from.s1, sym)),
            alnum: from.alnum + (mark ? 0 : 1),
            pb: NEG,
            pnb: NEG,
            classes: [...from.classes, c],
            steps: [...from.steps, t],
          };
        }
        next.set(text, e);
      }
      return e;
    };
    for (const p of beam) {
      const total = logAdd(p.pb, p.pnb);
      const same = entry(p, p.text, -1);
      same.pb = logAdd(same.pb, total + logBlank);
      for (let j = 0; j < cls.length; j += 1) {
        const c = cls[j] as number;
        const lp = logp[j] as number;
        if (c === p.last) {
          // Repeating the last character extends it; a second one needs a blank between.
          same.pnb = logAdd(same.pnb, p.pnb + lp);
          if (p.pb !== NEG) {
            const e = entry(p, p.text + (alphabet[c] ?? ''), c);
            e.pnb = logAdd(e.pnb, p.pb + lp);
          }
        } else {
          const e = entry(p, p.text + (alphabet[c] ?? ''), c);
          e.pnb = logAdd(e.pnb, total + lp);
        }
      }
    }
    beam = [...next.values()].sort((a, b) => score(b) - score(a)).slice(0, settings.beamWidth);
  }
  let best: { classes: number[]; steps: number[] } | undefined;
  let bestScore = NEG;
  for (const p of beam) {
    if (p.text === '') continue;
    const s =
      score(p) +
      (p.s1 === WORD_START ? 0 : settings.lmWeight * lm.logP(p.s2, p.s1, WORD_END)) +
      (lm.inLexicon(p.text) ? settings.lexiconBonus : 0);
    if (s > bestScore) {
      bestScore = s;
      best = { classes: p.classes, steps: p.steps };
    }
  }
  return best;
}

/**
 * Beam-decodes each crop of `out` (which must carry `top`), word by word over greedy decoding's words; `greedy` is
 * the greedy readings of the same crops, whose confidence is kept (the drop rule stays the greedy one). `allowed`
 * marks the classes the page's script may use (`latinClasses`).
 */
export function decodeCtcBeam(
  out: CtcSteps,
  alphabet: readonly string[],
  greedy: readonly CtcReading[],
  lm: ReaderLanguageModel,
  allowed: Uint8Array,
  settings: BeamSettings = DEFAULT_BEAM_SETTINGS,
  breaks: Partial<WordBreakSettings> = {},
): CtcReading[] {
  if (!out.top) return [...greedy];
  const spaceClass = alphabet.length - 1;
  const readings: CtcReading[] = [];
  for (let i = 0; i < out.n; i += 1) {
    const words = greedyWords(out, i, alphabet, spaceClass, { ...DEFAULT_WORD_BREAKS, ...breaks });
    let text = '';
    const at: number[] = [];
    words.forEach((word, w) => {
      const from = w === 0 ? 0 : (words[w - 1] as GreedyWord).runEnd + 1;
      const to = w === words.length - 1 ? out.steps - 1 : (words[w + 1] as GreedyWord).first - 1;
      const sure = beyondDoubt(out, i, word, from, to, allowed, spaceClass, settings.doubt);
      let found =
        (sure ? undefined : searchWord(out, i, from, to, alphabet, allowed, spaceClass, lm, settings)) ?? word;
      if (settings.guarded && found !== word) {
        const spell = (classes: number[]): string => classes.map((c) => alphabet[c] ?? '').join('');
        const foreign = word.classes.some((c) => !allowed[c]);
        if (!acceptable(spell(word.classes), spell(found.classes), foreign, lm)) found = word;
      }
      if (text !== '') {
        text += ' ';
        at.push(word.separator);
      }
      // As in greedy decoding, every UTF-16 unit of a class's text keeps the class's step.
      found.classes.forEach((c, n) => {
        const ch = alphabet[c] ?? '';
        text += ch;
        for (let u = 0; u < ch.length; u += 1) at.push(found.steps[n] as number);
      });
    });
    readings.push({ text, confidence: greedy[i]?.confidence ?? 0, steps: at });
  }
  return readings;
}
