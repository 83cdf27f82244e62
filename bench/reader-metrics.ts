/**
 * How well the OCR reads, scored against SROIE's line-level text truth (task 2), so a change to the reader can be
 * measured apart from the field rules that sit on top of it. Pure functions over a layout and the truth lines:
 * - word precision / recall / F1: the words of the receipt (split on whitespace, upper-cased) matched as multisets,
 *   the SROIE task-2 way; summed over receipts (micro);
 * - line detection recall: a truth line is found when the words read inside its band (vertical overlap of at least
 *   half the shorter height) cover at least half its width;
 * - character error rate per found line: the words whose centre falls inside the truth box, in reading order, joined
 *   by a space, against the truth text (Levenshtein distance ÷ truth characters, summed over found lines).
 */
import type { Box, DocumentLayout, LayoutWord } from '../src/engines/types';

/** One line of an `ocr-truth/<ID>.csv` file: its axis-aligned box and text. */
export interface TruthLine {
  box: Box;
  text: string;
}

/** Counts summed over receipts; `readerFigures` turns them into rates. */
export interface ReaderCounts {
  truthWords: number;
  readWords: number;
  matchedWords: number;
  truthLines: number;
  foundLines: number;
  /** Edit distance and truth characters summed over found lines. */
  edits: number;
  chars: number;
}

export interface ReaderFigures {
  precision: number;
  recall: number;
  f1: number;
  lineRecall: number;
  cer: number;
}

/** Parses `x1,y1,...,x4,y4,text` lines (the text may itself hold commas) into boxes and texts. */
export function parseTruthCsv(csv: string): TruthLine[] {
  const lines: TruthLine[] = [];
  for (const raw of csv.split(/\r?\n/)) {
    const parts = raw.split(',');
    if (parts.length < 9) continue;
    const coords = parts.slice(0, 8).map(Number);
    if (coords.some((v) => !Number.isFinite(v))) continue;
    const xs = [coords[0], coords[2], coords[4], coords[6]] as number[];
    const ys = [coords[1], coords[3], coords[5], coords[7]] as number[];
    const text = parts.slice(8).join(',').trim();
    if (text === '') continue;
    lines.push({ box: { x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) }, text });
  }
  return lines;
}

/** Whitespace-split, upper-cased words. */
export function wordsOf(text: string): string[] {
  return text
    .toUpperCase()
    .split(/\s+/)
    .filter((w) => w !== '');
}

/** How many words the two lists share, counted as multisets. */
export function multisetMatches(truth: string[], read: string[]): number {
  const counts = new Map<string, number>();
  for (const w of truth) counts.set(w, (counts.get(w) ?? 0) + 1);
  let matched = 0;
  for (const w of read) {
    const n = counts.get(w) ?? 0;
    if (n > 0) {
      matched += 1;
      counts.set(w, n - 1);
    }
  }
  return matched;
}

/** Levenshtein distance between two strings (two rows, O(|a|·|b|) time). */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current.push(
        Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + cost),
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}

const overlap = (a0: number, a1: number, b0: number, b1: number): number =>
  Math.max(0, Math.min(a1, b1) - Math.max(a0, b0));

/** Whether `words` cover at least half of the truth line's width inside its band. */
function lineFound(line: TruthLine, words: LayoutWord[]): boolean {
  const height = line.box.y1 - line.box.y0;
  const spans = words
    .filter((w) => {
      const v = overlap(line.box.y0, line.box.y1, w.box.y0, w.box.y1);
      return v >= 0.5 * Math.max(1, Math.min(height, w.box.y1 - w.box.y0));
    })
    .map((w) => [Math.max(line.box.x0, w.box.x0), Math.min(line.box.x1, w.box.x1)] as const)
    .filter(([a, b]) => b > a)
    .sort((p, q) => p[0] - q[0]);
  let covered = 0;
  let end = line.box.x0;
  for (const [a, b] of spans) {
    if (b <= end) continue;
    covered += b - Math.max(a, end);
    end = b;
  }
  return covered >= 0.5 * Math.max(1, line.box.x1 - line.box.x0);
}

/** The words read inside a truth box (centre inside), in reading order, as one string. */
function textInside(line: TruthLine, words: LayoutWord[]): string {
  return words
    .filter((w) => {
      const cx = (w.box.x0 + w.box.x1) / 2;
      const cy = (w.box.y0 + w.box.y1) / 2;
      return cx >= line.box.x0 && cx <= line.box.x1 && cy >= line.box.y0 && cy <= line.box.y1;
    })
    .sort((a, b) => a.box.x0 - b.box.x0)
    .map((w) => w.text)
    .join(' ');
}

/** Every word of a layout (the words of each line, or the line's text as one word list when it has none). */
export function layoutWords(layout: DocumentLayout): LayoutWord[] {
  const out: LayoutWord[] = [];
  for (const page of layout.pages) {
    for (const line of page.lines) {
      if (line.words && line.words.length > 0) out.push(...line.words);
      else out.push({ text: line.text, box: line.box, confidence: line.confidence });
    }
  }
  return out;
}

/** The counts of one receipt. */
export function scoreReading(truth: TruthLine[], layout: DocumentLayout): ReaderCounts {
  const words = layoutWords(layout);
  const truthWords = truth.flatMap((l) => wordsOf(l.text));
  const readWords = words.flatMap((w) => wordsOf(w.text));
  let foundLines = 0;
  let edits = 0;
  let chars = 0;
  for (const line of truth) {
    if (!lineFound(line, words)) continue;
    foundLines += 1;
    const want = line.text.toUpperCase();
    edits += editDistance(want, textInside(line, words).toUpperCase());
    chars += want.length;
  }
  return {
    truthWords: truthWords.length,
    readWords: readWords.length,
    matchedWords: multisetMatches(truthWords, readWords),
    truthLines: truth.length,
    foundLines,
    edits,
    chars,
  };
}

/** Sums counts over receipts. */
export function addCounts(a: ReaderCounts, b: ReaderCounts): ReaderCounts {
  return {
    truthWords: a.truthWords + b.truthWords,
    readWords: a.readWords + b.readWords,
    matchedWords: a.matchedWords + b.matchedWords,
    truthLines: a.truthLines + b.truthLines,
    foundLines: a.foundLines + b.foundLines,
    edits: a.edits + b.edits,
    chars: a.chars + b.chars,
  };
}

export const NO_COUNTS: ReaderCounts = {
  truthWords: 0,
  readWords: 0,
  matchedWords: 0,
  truthLines: 0,
  foundLines: 0,
  edits: 0,
  chars: 0,
};

/** Rates from summed counts. */
export function readerFigures(c: ReaderCounts): ReaderFigures {
  const precision = c.readWords > 0 ? c.matchedWords / c.readWords : 0;
  const recall = c.truthWords > 0 ? c.matchedWords / c.truthWords : 0;
  return {
    precision,
    recall,
    f1: precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0,
    lineRecall: c.truthLines > 0 ? c.foundLines / c.truthLines : 0,
    cer: c.chars > 0 ? c.edits / c.chars : 0,
  };
}
