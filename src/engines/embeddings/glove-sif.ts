/**
 * The semantic part of the text embedding: a SIF-weighted mean of GloVe word vectors (Arora, Liang & Ma, 2017,
 * "A simple but tough-to-beat baseline for sentence embeddings").
 *
 * Each in-vocabulary word adds its vector times a / (a + p(w)), so frequent words ("the", "of") count little; the
 * table's common component is then projected out. Words missing from the 50k table are looked up again after
 * undoing contractions ("don't" → do + not), splitting hyphenated words and splitting code identifiers
 * (`getUserName` → get, user, name); if that fails they add nothing here (the hashed block still sees them).
 * It is a bag of words: word order is ignored, and antonyms ("love"/"hate") sit close together.
 */
import { splitIdentifier } from './text-tokenizer';
import type { WordVectors } from './word-vectors';

const NOT_BASES: Record<string, string> = { ca: 'can', wo: 'will', sha: 'shall', ai: 'is' };
const CLITICS: Record<string, string | null> = { s: null, re: 'are', ll: 'will', ve: 'have', d: 'would', m: 'am' };

/** Rows of the table for one word (normalised form `key`, original spelling `original`), appended to `out`. */
export function wordRows(table: WordVectors, key: string, original: string, out: number[]): void {
  const row = table.index.get(key);
  if (row !== undefined) {
    out.push(row);
    return;
  }
  const parts = expandWord(key, original);
  for (const part of parts) {
    const partRow = table.index.get(part);
    if (partRow !== undefined) out.push(partRow);
  }
}

function expandWord(key: string, original: string): string[] {
  const apostrophe = key.lastIndexOf("'");
  if (apostrophe > 0) {
    const head = key.slice(0, apostrophe);
    const tail = key.slice(apostrophe + 1);
    if (tail === 't' && head.endsWith('n')) {
      const base = head.slice(0, -1);
      return [NOT_BASES[base] ?? base, 'not'];
    }
    if (tail in CLITICS) {
      const clitic = CLITICS[tail];
      return clitic ? [head, clitic] : [head];
    }
  }
  if (key.includes('-') || key.includes("'")) return key.split(/['-]/).filter((p) => p.length > 0);
  return splitIdentifier(original);
}

/**
 * Writes the SIF sentence vector of `rows` into `out[offset .. offset + dims)`, with the common component removed
 * and scaled to norm √share. Returns false (and writes nothing) when there are no rows.
 */
export function writeSif(
  table: WordVectors,
  rows: readonly number[],
  out: Float32Array,
  offset: number,
  share: number,
): boolean {
  if (rows.length === 0) return false;
  const { dims, values, scales, sif, common } = table;
  const acc = new Float64Array(dims);
  for (const row of rows) {
    const f = (sif[row] as number) * (scales[row] as number);
    const base = row * dims;
    for (let j = 0; j < dims; j += 1) acc[j] = (acc[j] as number) + f * (values[base + j] as number);
  }
  let dot = 0;
  for (let j = 0; j < dims; j += 1) dot += (acc[j] as number) * (common[j] as number);
  let sum = 0;
  for (let j = 0; j < dims; j += 1) {
    const v = (acc[j] as number) - dot * (common[j] as number);
    acc[j] = v;
    sum += v * v;
  }
  if (sum === 0) return false;
  const scale = Math.sqrt(share / sum);
  for (let j = 0; j < dims; j += 1) out[offset + j] = (acc[j] as number) * scale;
  return true;
}
