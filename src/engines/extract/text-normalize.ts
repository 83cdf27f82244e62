/**
 * Small text helpers shared by the finders: splitting schema identifiers into words, normalising OCR text for label
 * matching (case, punctuation, the usual letter/digit confusions), and a bounded edit distance for fuzzy labels.
 * Values keep their printed form; only matching works on the normalised forms.
 */

/** `invoiceNumber`, `invoice_number`, `invoice-number` → `['invoice', 'number']`. */
export function splitIdentifier(identifier: string): string[] {
  return identifier
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9#]+/)
    .filter(Boolean);
}

/** Lower-case label tokens of a text: punctuation splits words, except `/ # % @ .` inside a token. */
export function labelTokens(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9#/%@.&]+/g, ' ')
    .split(' ')
    .map((t) => t.replace(/^[./]+|[./]+$/g, ''))
    .filter(Boolean);
}

/** Upper-case letters and digits only: the form names and addresses are compared in. */
export const alnumUpper = (text: string): string =>
  text
    .normalize('NFKC')
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, '');

/** Levenshtein distance, giving up (returns `max + 1`) once it exceeds `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  if (max === 1) return a === b ? 0 : withinOneEdit(a, b) ? 1 : 2;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const cur = [i];
    let best = i;
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const v = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      cur.push(v);
      best = Math.min(best, v);
    }
    if (best > max) return max + 1;
    prev = cur;
  }
  return prev[b.length] ?? max + 1;
}

/**
 * Whether two different strings, at most one apart in length, are one substitution, insertion or deletion apart:
 * the question every fuzzy word match here asks (`editDistance(…, 1)`), answered in one pass without a table.
 */
function withinOneEdit(a: string, b: string): boolean {
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  let i = 0;
  while (i < short.length && short[i] === long[i]) i += 1;
  // After the first difference the rest must match: shifted by one (an insertion) or aligned (a substitution).
  if (short.length === long.length) return short.slice(i + 1) === long.slice(i + 1);
  return short.slice(i) === long.slice(i + 1);
}

/** 0..1 similarity of two strings by edit distance (1 = equal). */
export function similarity(a: string, b: string): number {
  const longest = Math.max(a.length, b.length);
  if (longest === 0) return 1;
  return 1 - editDistance(a, b, longest) / longest;
}

/** Two label tokens match exactly, or within one edit when both are long enough to make that safe. */
export function tokensMatch(word: string, label: string): boolean {
  if (word === label) return true;
  if (label.length < 5 || word.length < 4) return false;
  const cleaned = word.replace(/0/g, 'o').replace(/1/g, 'l').replace(/5/g, 's');
  return editDistance(cleaned, label, 1) <= 1;
}

/**
 * Repairs OCR confusions inside something that should be a number (`O`→`0`, `l`/`I`→`1`, `S`→`5`), only when the
 * token is already mostly digits, so words are never turned into numbers.
 */
export function repairNumeric(token: string): string {
  const digits = (token.match(/\d/g) ?? []).length;
  if (digits < 2 || digits < token.replace(/[^A-Za-z0-9]/g, '').length * 0.6) return token;
  return token.replace(/[Oo]/g, '0').replace(/[lI|]/g, '1');
}

/** Collapses runs of whitespace and trims. */
export const squash = (text: string): string => text.replace(/\s+/g, ' ').trim();
