/**
 * Turns one text (or one list of token ids) into the 768-value vector of the local text embedder.
 *
 * Layout, most informative first so Matryoshka truncation keeps what matters:
 *   dims   0–99   GloVe-100 SIF mean (semantic; see glove-sif.ts)
 *   dims 100–127  hashed band 1 ┐ every word unigram, word bigram and char 3–5-gram is hashed into
 *   dims 128–255  hashed band 2 │ each band (see hashed-features.ts), so 128/256/512 prefixes keep
 *   dims 256–511  hashed band 3 │ all lexical features at a coarser resolution
 *   dims 512–767  hashed band 4 ┘
 * The blocks are scaled so the GloVe block holds `semanticShare` of the squared norm at 768 dims and more of it in
 * shorter prefixes; callers re-normalise after truncating.
 */
import { addCharNgrams, addHashed, finishBands, hashId, hashPair, hashString, type HashBand } from './hashed-features';
import { wordRows, writeSif } from './glove-sif';
import type { PromptProfile } from './prompt-names';
import { normalizeWord } from './text-tokenizer';
import { normalizeInPlace } from './vector-math';
import type { WordVectors } from './word-vectors';

/** Full length of a text vector. */
export const TEXT_VECTOR_LENGTH = 768;
/** Where the hashed block starts (after the 100 GloVe dims). */
const HASH_START = 100;
/** Band boundaries: each band ends at a Matryoshka cut (128, 256, 512, 768). */
const BAND_EDGES = [HASH_START, 128, 256, 512, 768] as const;
/** Relative share of each band within the hashed block's squared norm. */
const BAND_WEIGHTS = [0.3, 0.25, 0.2, 0.25] as const;

/** Feature weights inside the hashed block. */
export const FEATURE_WEIGHTS = { unigram: 1, bigram: 0.6, charNgram: 0.25 } as const;

function bandsFor(semanticShare: number): HashBand[] {
  const lexical = 1 - semanticShare;
  return BAND_WEIGHTS.map((w, b) => ({
    offset: BAND_EDGES[b] as number,
    size: (BAND_EDGES[b + 1] as number) - (BAND_EDGES[b] as number),
    share: lexical * w,
  }));
}

/** Vectorises texts and token-id lists against one word-vector table. */
export interface TextVectorizer {
  /** Unit vector of `words` (as split by the tokenizer); null when nothing in it yields a feature. */
  words(words: readonly string[], profile: PromptProfile): Float32Array | null;
  /** Unit vector of token ids, hashed as opaque tokens (unigrams + bigrams); null for an empty list. */
  ids(ids: readonly number[], profile: PromptProfile): Float32Array | null;
}

/** Builds a {@link TextVectorizer} over `table` (its dims must be 100). */
export function createTextVectorizer(table: WordVectors): TextVectorizer {
  if (table.dims !== HASH_START) throw new Error(`word vectors must have ${HASH_START} dims, not ${table.dims}`);
  const bandCache = new Map<number, HashBand[]>();
  const bands = (share: number): HashBand[] => {
    let cached = bandCache.get(share);
    if (!cached) bandCache.set(share, (cached = bandsFor(share)));
    return cached;
  };

  return {
    words(words, profile) {
      const out = new Float32Array(TEXT_VECTOR_LENGTH);
      const hashBands = bands(profile.semanticShare);
      const rows: number[] = [];
      let kept = 0;
      let previous = 0;
      const keys = words.map(normalizeWord);
      const keepAll = keys.every((key) => profile.drop.has(key));
      for (const [i, key] of keys.entries()) {
        if (!keepAll && profile.drop.has(key)) continue;
        const word = words[i] as string;
        wordRows(table, key, word, rows);
        const h = hashString(key);
        addHashed(out, hashBands, h, FEATURE_WEIGHTS.unigram);
        if (kept > 0) addHashed(out, hashBands, hashPair(previous, h), FEATURE_WEIGHTS.bigram);
        addCharNgrams(out, hashBands, key, FEATURE_WEIGHTS.charNgram);
        previous = h;
        kept += 1;
      }
      if (kept === 0) return null;
      finishBands(out, hashBands);
      writeSif(table, rows, out, 0, profile.semanticShare);
      return normalizeInPlace(out);
    },
    ids(ids, profile) {
      if (ids.length === 0) return null;
      const out = new Float32Array(TEXT_VECTOR_LENGTH);
      const hashBands = bands(profile.semanticShare);
      let previous = 0;
      ids.forEach((id, i) => {
        const h = hashId(id);
        addHashed(out, hashBands, h, FEATURE_WEIGHTS.unigram);
        if (i > 0) addHashed(out, hashBands, hashPair(previous, h), FEATURE_WEIGHTS.bigram);
        previous = h;
      });
      finishBands(out, hashBands);
      return normalizeInPlace(out);
    },
  };
}
