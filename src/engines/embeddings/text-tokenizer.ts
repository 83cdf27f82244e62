/**
 * The tokenizer of the local text embedder: splits text into words and punctuation marks.
 *
 * It exists for two jobs: the words feed the embedding, and the count of words plus punctuation marks is what
 * `usage.prompt_tokens` reports and what the 8,192-token window is measured in. It is a word tokenizer, not a
 * sub-word (BPE/WordPiece) one, so counts are lower than an LLM tokenizer's for the same text (roughly 0.75–0.9×
 * on English prose).
 */

/** A word (letters/digits, inner `-` `'` `’` kept) or one punctuation/symbol character. */
const TOKEN = /[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*|[^\s\p{L}\p{N}]/gu;
const WORD_START = /[\p{L}\p{N}]/u;

function isWord(token: string): boolean {
  const c = token.charCodeAt(0);
  if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57)) return true;
  return c > 127 && WORD_START.test(token);
}

/** The words of a text (original case, in order) and its token count. */
export interface ScannedText {
  words: string[];
  tokens: number;
}

/** Splits `text` into words and counts tokens (words + punctuation marks) in one pass. */
export function scanText(text: string): ScannedText {
  const words: string[] = [];
  let tokens = 0;
  TOKEN.lastIndex = 0;
  for (let m = TOKEN.exec(text); m !== null; m = TOKEN.exec(text)) {
    tokens += 1;
    const token = m[0];
    if (isWord(token)) words.push(token);
  }
  return { words, tokens };
}

/** Number of tokens in `text` (words + punctuation marks). */
export function countTokens(text: string): number {
  let tokens = 0;
  TOKEN.lastIndex = 0;
  while (TOKEN.exec(text) !== null) tokens += 1;
  return tokens;
}

/** The prefix of `text` holding its first `max` tokens (the whole text if it has no more). */
export function truncateToTokens(text: string, max: number): string {
  if (max <= 0) return '';
  let tokens = 0;
  TOKEN.lastIndex = 0;
  for (let m = TOKEN.exec(text); m !== null; m = TOKEN.exec(text)) {
    tokens += 1;
    if (tokens === max) return text.slice(0, TOKEN.lastIndex);
  }
  return text;
}

/** Lower-cases a word and folds the typographic apostrophe, the key used for vocabulary and hashing. */
export function normalizeWord(word: string): string {
  const lower = word.toLowerCase();
  return lower.includes('’') ? lower.replaceAll('’', "'") : lower;
}

const CAMEL_PART = /[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+/g;

/** `getUserName` → `get`, `user`, `name`; `HTTPServer` → `http`, `server`; other words → []. */
export function splitIdentifier(word: string): string[] {
  if (!/[a-z][A-Z]|[A-Z][A-Z][a-z]|[A-Za-z]\d|\d[A-Za-z]/.test(word)) return [];
  return (word.match(CAMEL_PART) ?? []).map((part) => part.toLowerCase());
}
