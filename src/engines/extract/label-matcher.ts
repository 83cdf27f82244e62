/**
 * Finds label phrases ("total amount", "invoice no", "date") in rows of OCR text, tolerating case, punctuation and
 * one-character OCR slips in longer words, and reports where each label ends so a value can be read to its right.
 */
import type { Row } from './layout-index';
import { tokensMatch } from './text-normalize';

/** A label found in a row: the phrase, its character span in the row text and how closely it matched. */
export interface LabelHit {
  row: Row;
  phrase: string;
  start: number;
  end: number;
  /** 1 for an exact match, less for fuzzy ones. */
  strength: number;
}

interface Piece {
  t: string;
  start: number;
  end: number;
}

const cache = new WeakMap<Row, Piece[]>();

/** Lower-case label pieces of a row with their offsets (same splitting as `labelTokens`). */
export function rowPieces(row: Row): Piece[] {
  const hit = cache.get(row);
  if (hit) return hit;
  const pieces: Piece[] = [];
  for (const m of row.text.toLowerCase().matchAll(/[a-z0-9/%@.&]+|#/g)) {
    const lead = /^[./]*/.exec(m[0])?.[0].length ?? 0;
    const trail = /[./]*$/.exec(m[0])?.[0].length ?? 0;
    const t = m[0].slice(lead, m[0].length - trail);
    if (t) pieces.push({ t, start: m.index + lead, end: m.index + m[0].length - trail });
  }
  cache.set(row, pieces);
  return pieces;
}

const phraseCache = new Map<string, string[]>();
/** Bounded: enum values are caller text (a long enum would otherwise keep every value here for good). */
const PHRASE_CACHE_MAX = 10_000;
function phrasePieces(phrase: string): string[] {
  let pieces = phraseCache.get(phrase);
  if (!pieces) {
    pieces = labelPieces(phrase);
    if (phraseCache.size >= PHRASE_CACHE_MAX) phraseCache.clear();
    phraseCache.set(phrase, pieces);
  }
  return pieces;
}

/** A phrase's lower-case pieces, split as row text is (`rowPieces`). */
export function labelPieces(phrase: string): string[] {
  return (phrase.toLowerCase().match(/[a-z0-9/%@.&]+|#/g) ?? []).map((p) => p.replace(/^[./]+|[./]+$/g, ''));
}

/** Every occurrence of any of `phrases` in `row`; longer phrases win where two overlap. */
export function findLabels(row: Row, phrases: readonly string[]): LabelHit[] {
  const pieces = rowPieces(row);
  const hits: LabelHit[] = [];
  for (const phrase of phrases) {
    const want = phrasePieces(phrase);
    if (want.length === 0) continue;
    const joined = want.join('');
    for (let i = 0; i < pieces.length; i += 1) {
      let fuzzy = 0;
      let ok = true;
      for (let k = 0; k < want.length && ok; k += 1) {
        const got = pieces[i + k]?.t ?? '';
        const w = want[k] ?? '';
        if (got === w) continue;
        if (tokensMatch(got, w)) fuzzy += 1;
        else ok = false;
      }
      let last = i + want.length - 1;
      // "SubTotal" printed as one word matches "sub total"; "Total:" etc. are already split.
      if (!ok && want.length > 1 && pieces[i]?.t === joined) {
        ok = true;
        fuzzy = 0;
        last = i;
      }
      if (!ok) continue;
      const first = pieces[i];
      const end = pieces[last];
      if (!first || !end) continue;
      hits.push({ row, phrase, start: first.start, end: end.end, strength: fuzzy > 0 ? 0.8 : 1 });
    }
  }
  hits.sort((a, b) => b.end - b.start - (a.end - a.start) || a.start - b.start);
  const kept: LabelHit[] = [];
  for (const h of hits) if (!kept.some((k) => h.start < k.end && h.end > k.start)) kept.push(h);
  return kept.sort((a, b) => a.start - b.start);
}

/** True when `row` contains any of `phrases`. */
export const hasLabel = (row: Row, phrases: readonly string[]): boolean => findLabels(row, phrases).length > 0;

/** Text to the right of a label, with separators (`:`, `-`, `=`, `#`, dots) removed from its start. */
export function textAfter(hit: LabelHit): { text: string; start: number } {
  const rest = hit.row.text.slice(hit.end);
  const lead = /^[\s:=#.\-–|>]*/.exec(rest)?.[0].length ?? 0;
  return { text: rest.slice(lead).trimEnd(), start: hit.end + lead };
}
