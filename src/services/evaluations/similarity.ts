/**
 * Value comparison for the deterministic evaluators: canonical JSON equality, the normalisation `fuzzy_field_match`
 * applies to text (Unicode NFKC, lower case, punctuation to spaces, whitespace collapsed), and a normalised
 * Levenshtein similarity in [0, 1] (1 - distance / longer length).
 */

/** JSON with object keys sorted, so `{a,b}` and `{b,a}` compare equal. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** Exact equality of two leaves: same JSON after sorting keys; numbers within 1e-9; strings trimmed. */
export function exactMatch(expected: unknown, predicted: unknown): boolean {
  if (typeof expected === 'number' && typeof predicted === 'number') return Math.abs(expected - predicted) <= 1e-9;
  if (typeof expected === 'string' && typeof predicted === 'string') return expected.trim() === predicted.trim();
  return canonicalJson(expected) === canonicalJson(predicted);
}

export function normaliseText(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** A number written as text (`"1,234.50"`, `"$ 12"`), else undefined. */
function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string') return undefined;
  const cleaned = value.replace(/[,\s]/g, '').replace(/^[^\d+-.]+/, '');
  if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(cleaned)) return undefined;
  return Number(cleaned);
}

/** Text form of a leaf for fuzzy comparison: strings as they are, anything else as canonical JSON. */
function textOf(value: unknown): string {
  return normaliseText(typeof value === 'string' ? value : canonicalJson(value));
}

/** Similarity in [0, 1]: 1 for equal numbers (`"120.00"` vs `120`), else Levenshtein on the normalised text. */
export function fuzzySimilarity(expected: unknown, predicted: unknown): number {
  if (expected === null || predicted === null || predicted === undefined) {
    return expected === (predicted ?? null) ? 1 : 0;
  }
  const a = numberOf(expected);
  const b = numberOf(predicted);
  if (a !== undefined && b !== undefined) return Math.abs(a - b) <= 1e-9 ? 1 : 0;
  return stringSimilarity(textOf(expected), textOf(predicted));
}

export function stringSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  const longer = Math.max(a.length, b.length);
  if (longer === 0) return 1;
  return 1 - levenshtein(a, b) / longer;
}

function levenshtein(a: string, b: string): number {
  if (a.length < b.length) [a, b] = [b, a];
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}
