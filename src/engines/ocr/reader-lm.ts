/**
 * The OCR reader's language model: a character trigram model and a word lexicon, both from the committed
 * assets/ocr/reader-lexicon.json (built by scripts/build-reader-lexicon.ts from public word lists and gazetteers,
 * never from merchants or the development receipts). The beam CTC decoder (ctc-beam.ts) adds the trigram log
 * probability of each character it emits and a bonus when a whole word is in the lexicon.
 *
 * Characters are scored case-folded; every digit is one symbol (`0`), so the model knows a digit follows digits
 * (`S6100` → `56100`) but never prefers one digit over another — which digit it is stays the recogniser's call.
 * Every other character (punctuation, symbols) is a `MARK`: the model does not score it, it ends the run of letters
 * and digits before it and the next run starts afresh (`PUTRA1,`, `No.2&4`, `(RM)`: whether the mark is there is the
 * recogniser's call too, since word lists say nothing about it).
 * The trigram table (30³ floats) is estimated when the file is loaded (tens of milliseconds), by linear
 * interpolation of trigram, bigram and unigram relative frequencies with add-one smoothing of the unigrams.
 */
import fs from 'node:fs';
import path from 'node:path';

/** File name of the committed lexicon under `assets/ocr/`. */
export const READER_LEXICON_FILE = 'reader-lexicon.json';

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
/** Symbols: the run start (context only), the run end, the letters, the digit symbol, and MARK (never scored). */
const SYMBOLS = ['^', '$', ...LETTERS, '0', '~'];
export const SYMBOL_COUNT = SYMBOLS.length;
export const WORD_START = 0;
export const WORD_END = 1;
export const MARK = SYMBOLS.length - 1;
const DIGIT = SYMBOLS.length - 2;

/** The model symbol of one (NFKC-folded) character: a letter, the digit symbol, or MARK. */
export function symbolOf(ch: string): number {
  const up = ch.normalize('NFKC').toUpperCase();
  if (up.length !== 1) return MARK;
  if (up >= '0' && up <= '9') return DIGIT;
  if (up >= 'A' && up <= 'Z') return 2 + up.charCodeAt(0) - 65;
  return MARK;
}

export interface ReaderLanguageModel {
  /**
   * log P(next | two symbols before), symbols from `symbolOf` (WORD_START before a run's first character); not
   * meaningful for MARK, which the caller does not score.
   */
  logP(before2: number, before1: number, next: number): number;
  /** Whether the word (its letters, case-folded, punctuation at either end stripped) is in the lexicon. */
  inLexicon(word: string): boolean;
  /** Words in the lexicon. */
  size: number;
}

interface LexiconFile {
  words: string;
  shapes: [string, number][];
}

/** Interpolation weights of the trigram, bigram and unigram estimates. */
const WEIGHTS = [0.6, 0.3, 0.1] as const;

/** Builds the model from training strings with counts (words as written, upper case) and the lexicon words. */
export function buildReaderLanguageModel(
  training: readonly (readonly [string, number])[],
  lexicon: readonly string[],
): ReaderLanguageModel {
  const V = SYMBOL_COUNT;
  const tri = new Float64Array(V * V * V);
  const bi = new Float64Array(V * V);
  const uni = new Float64Array(V);
  const runs = training.flatMap(([text, count]) =>
    text
      .split(/[^A-Za-z0-9]+/)
      .filter((run) => run !== '')
      .map((run) => [run, count] as const),
  );
  for (const [text, count] of runs) {
    const syms = [WORD_START, WORD_START, ...Array.from(text, symbolOf), WORD_END];
    for (let i = 2; i < syms.length; i += 1) {
      const a = syms[i - 2] as number;
      const b = syms[i - 1] as number;
      const c = syms[i] as number;
      const t = (a * V + b) * V + c;
      tri[t] = (tri[t] as number) + count;
      bi[b * V + c] = (bi[b * V + c] as number) + count;
      uni[c] = (uni[c] as number) + count;
    }
  }
  // Unigram: add-one over the symbols a run can hold (never the start symbol or MARK).
  const uniP = new Float64Array(V);
  const uniTotal = uni.reduce((s, v) => s + v, 0) + (V - 2);
  for (let c = 1; c < MARK; c += 1) uniP[c] = ((uni[c] as number) + 1) / uniTotal;
  const biRow = new Float64Array(V);
  for (let b = 0; b < V; b += 1) {
    for (let c = 0; c < V; c += 1) biRow[b] = (biRow[b] as number) + (bi[b * V + c] as number);
  }
  const table = new Float32Array(V * V * V);
  for (let a = 0; a < V; a += 1) {
    for (let b = 0; b < V; b += 1) {
      let triRow = 0;
      for (let c = 0; c < V; c += 1) triRow += tri[(a * V + b) * V + c] as number;
      for (let c = 0; c < V; c += 1) {
        const pTri = triRow > 0 ? (tri[(a * V + b) * V + c] as number) / triRow : 0;
        const pBi = (biRow[b] as number) > 0 ? (bi[b * V + c] as number) / (biRow[b] as number) : 0;
        // Weights of an unseen context go to the lower orders.
        const wTri = triRow > 0 ? WEIGHTS[0] : 0;
        const wBi = (biRow[b] as number) > 0 ? WEIGHTS[1] : 0;
        const wUni = 1 - wTri - wBi;
        const p = wTri * pTri + wBi * pBi + wUni * (uniP[c] as number);
        table[(a * V + b) * V + c] = Math.log(Math.max(p, 1e-12));
      }
    }
  }
  const words = new Set(lexicon);
  return {
    logP: (a, b, c) => table[(a * V + b) * V + c] as number,
    inLexicon: (word) => {
      const core = word
        .normalize('NFKC')
        .toUpperCase()
        .replace(/^[^A-Z0-9]+|[^A-Z0-9]+$/g, '');
      return core.length >= 2 && words.has(core);
    },
    size: words.size,
  };
}

/** Parses a lexicon file: every word counts once in the character model, and each number shape its own count. */
export function parseReaderLexicon(text: string): ReaderLanguageModel {
  const file = JSON.parse(text) as LexiconFile;
  const words = file.words.split(' ').filter((w) => w !== '');
  const training: [string, number][] = [...words.map((w): [string, number] => [w, 1]), ...file.shapes];
  return buildReaderLanguageModel(training, words);
}

/**
 * Where the committed lexicon lives: the nearest `assets/ocr/<file>` walking up from this module (works from `src/`
 * under tsx/ts-jest and from `dist/src/` after a build).
 */
export function defaultReaderLexiconPath(file = READER_LEXICON_FILE): string {
  let dir = __dirname;
  for (;;) {
    const candidate = path.join(dir, 'assets', 'ocr', file);
    if (fs.existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`OCR reader lexicon ${file} not found above ${__dirname}`);
    dir = parent;
  }
}

let shared: ReaderLanguageModel | undefined;

/** The committed model, loaded once per process. */
export function sharedReaderLanguageModel(): ReaderLanguageModel {
  shared ??= parseReaderLexicon(fs.readFileSync(defaultReaderLexiconPath(), 'utf8'));
  return shared;
}
