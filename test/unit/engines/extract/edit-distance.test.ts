/**
 * The one-edit check every fuzzy word match of the extractor asks (`editDistance(a, b, 1)`) takes a one-pass path;
 * it must answer exactly as the full edit-distance table does, on every pair of short strings over a small alphabet
 * (where insertions, deletions and substitutions collide most).
 */
import { editDistance } from '../../../../src/engines/extract/text-normalize';

/** Every string of length 0..`n` over `alphabet`. */
function allStrings(alphabet: string, n: number): string[] {
  const out = [''];
  for (let length = 1; length <= n; length += 1) {
    for (const s of out.filter((x) => x.length === length - 1)) for (const c of alphabet) out.push(s + c);
  }
  return out;
}

describe('editDistance within one edit', () => {
  it('answers as the full table does for every pair of strings up to 4 letters over 3', () => {
    const strings = allStrings('abc', 4);
    let checked = 0;
    for (const a of strings) {
      for (const b of strings) {
        const table = editDistance(a, b, 8);
        expect([a, b, Math.min(editDistance(a, b, 1), 2)]).toEqual([a, b, Math.min(table, 2)]);
        checked += 1;
      }
    }
    expect(checked).toBe(121 * 121);
  });

  it('reads a substitution, an insertion and a deletion anywhere as one edit, and two as more', () => {
    expect(editDistance('SELANGOR', 'SELANGDR', 1)).toBe(1);
    expect(editDistance('PERSIARAN', 'PERSIRAN', 1)).toBe(1);
    expect(editDistance('JALAN', 'XJALAN', 1)).toBe(1);
    expect(editDistance('JALAN', 'JALAN', 1)).toBe(0);
    expect(editDistance('JALAN', 'JLAAN', 1)).toBe(2);
  });
});
