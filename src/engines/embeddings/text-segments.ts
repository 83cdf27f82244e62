/**
 * Embeds the text segments of one input (text parts, document pages, OCR text) into one 768-value vector, under the
 * input's shared token window.
 *
 * Both engines use it: the text engine for strings, text parts and PDF pages; the multimodal engine for the text
 * region of its vectors. Segments are embedded separately and mean-pooled (each non-empty segment counts once, so a
 * PDF's pages weigh equally). Over the window, the input fails with 400 unless a truncation budget is given; then
 * the first `budget` tokens are kept (later segments are cut first; the head of the input survives).
 */
import { overWindow } from './embedding-input';
import type { PromptProfile } from './prompt-names';
import { scanText, truncateToTokens } from './text-tokenizer';
import { TEXT_VECTOR_LENGTH, type TextVectorizer } from './text-vectorizer';
import { meanPool } from './vector-math';

/** The pooled text vector of one input (null when no segment had any token) and the tokens it used. */
export interface SegmentsVector {
  vector: Float32Array | null;
  tokens: number;
}

/** Where the token limits come from for one input. */
export interface SegmentLimits {
  /** Position of the input in the request (for error messages). */
  index: number;
  window: number;
  /** Truncation budget from `truncate_prompt_tokens`, or null to fail over the window. */
  budget: number | null;
}

/** Splits on whitespace when the tokenizer found no words (e.g. only punctuation or emoji), so it still hashes. */
function wordsOf(text: string): { words: string[]; tokens: number } {
  const scanned = scanText(text);
  if (scanned.words.length > 0 || scanned.tokens === 0) return scanned;
  return { words: text.split(/\s+/).filter((w) => w.length > 0), tokens: scanned.tokens };
}

/** Embeds `segments` as one input. @throws BadRequestError (param `input`) when over the window without a budget. */
export function embedSegments(
  vectorizer: TextVectorizer,
  segments: readonly string[],
  profile: PromptProfile,
  limits: SegmentLimits,
): SegmentsVector {
  const scanned = segments.map(wordsOf);
  const total = scanned.reduce((sum, s) => sum + s.tokens, 0);
  if (limits.budget === null && total > limits.window) throw overWindow(limits.index, total, limits.window);
  const limit = limits.budget ?? limits.window;
  const vectors: Float32Array[] = [];
  let used = 0;
  for (let i = 0; i < segments.length && used < limit; i += 1) {
    let part = scanned[i] as { words: string[]; tokens: number };
    if (used + part.tokens > limit) part = wordsOf(truncateToTokens(segments[i] as string, limit - used));
    used += part.tokens;
    const vector = vectorizer.words(part.words, profile);
    if (vector) vectors.push(vector);
  }
  if (vectors.length === 0) return { vector: null, tokens: used };
  return {
    vector: vectors.length === 1 ? (vectors[0] as Float32Array) : meanPool(vectors, TEXT_VECTOR_LENGTH),
    tokens: used,
  };
}

/** Embeds token ids as one input (opaque hashed tokens), with the same window rules. */
export function embedIds(
  vectorizer: TextVectorizer,
  ids: readonly number[],
  profile: PromptProfile,
  limits: SegmentLimits,
): SegmentsVector {
  if (limits.budget === null && ids.length > limits.window) throw overWindow(limits.index, ids.length, limits.window);
  const kept = ids.slice(0, limits.budget ?? limits.window);
  return { vector: vectorizer.ids(kept, profile), tokens: kept.length };
}
