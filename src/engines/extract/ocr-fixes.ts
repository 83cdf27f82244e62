/**
 * Line-level repair of common OCR slips in names and addresses, against the generic vocabulary and glyph classes
 * only: a word one edit away from a known region, street or business word is read as that word (`Koala Lumpur` →
 * `KUALA LUMPUR`, `PERMNIAGAAN` → `PERNIAGAAN`; town words only for a substituted letter), the street abbreviation
 * `JLN` misread as `JIN`/`JUN`/`3LN` is restored, a known word split around a confusable glyph is joined, round
 * glyphs inside numbers are read as `0`, and `&` misread as `6` or `8` between house numbers is put back. A word
 * that is itself a known place word is never changed. Each fix reports which words it touched, so callers can trust
 * those words despite their low OCR confidence.
 */
import { editDistance } from './text-normalize';
import { ADDRESS_WORDS, BUSINESS_WORDS, CITY_WORDS, PLACE_ELEMENTS, REGION_WORDS } from './vocabulary';
import { repairByPostcode } from './postcode-places';
import { ruleOn } from './rule-switches';

/** Repaired text and the original words that were changed. */
export interface Repaired {
  text: string;
  fixed: Set<string>;
}

const PLACE_WORDS = [...REGION_WORDS, ...CITY_WORDS];
const REGION_PHRASES = REGION_WORDS.map((p) => p.split(' ')).filter((p) => p.every((w) => w.length >= 4));
/** Town names are repaired only in their long words: a short word (`JASA` beside `JAYA`) may be a place's own. */
const CITY_PHRASES = CITY_WORDS.map((p) => p.split(' ')).filter((p) => p.every((w) => w.length >= 4));
/** Every single word of the place and street vocabulary: a word printed as one of these is never "repaired". */
const KNOWN_WORDS = new Set([...PLACE_WORDS, ...ADDRESS_WORDS].flatMap((p) => p.split(' ')));
const LONG_ADDRESS = ADDRESS_WORDS.filter((w) => w.length >= 5 && /^[A-Z]+$/.test(w));
/**
 * Long town words, repaired only for a substituted letter (`FETALING`): a word a letter shorter may be another word.
 * The generic parts of place names (`TANJUNG`, `SUNGAI`) are spelt more than one way (`TANJONG`, `SUNGEI`) and are
 * never repaired alone.
 */
const LONG_CITY = [...new Set(CITY_WORDS.flatMap((p) => p.split(' ')))].filter(
  (w) => w.length >= 7 && !PLACE_ELEMENTS.includes(w),
);
const LONG_BUSINESS = BUSINESS_WORDS.filter((w) => w.length >= 6);

function close(word: string, target: string): boolean {
  const w = word.toUpperCase();
  if (w === target || Math.abs(w.length - target.length) > (target.length >= 7 ? 1 : 0)) return false;
  if (w[0] !== target[0] && target.length < 7) return false;
  return editDistance(w, target, 1) <= 1;
}

/** Replaces the letters of `token` with `canonical` in the token's case, keeping surrounding punctuation. */
function swap(token: string, canonical: string): string {
  const core = token.replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  const cased =
    core === core.toUpperCase()
      ? canonical
      : core === core.toLowerCase()
        ? canonical.toLowerCase()
        : canonical[0] + canonical.slice(1).toLowerCase();
  return token.replace(core, cased);
}

/** A vocabulary's words as a set, and by length with their place in the list (fixWords keeps the first close one). */
interface VocabularyIndex {
  words: ReadonlySet<string>;
  byLength: ReadonlyMap<number, readonly { at: number; word: string }[]>;
  /** candidatesOf's answers by length, made once (the index never changes). */
  near: Map<number, readonly string[]>;
}

const indexes = new WeakMap<readonly string[], VocabularyIndex>();

/**
 * The index of one of this module's fixed vocabularies, built on first use: a name line is repaired for every header
 * candidate of every extraction, and scanning each list for each word cost about a millisecond per short text.
 */
function indexOf(vocabulary: readonly string[]): VocabularyIndex {
  let index = indexes.get(vocabulary);
  if (!index) {
    const byLength = new Map<number, { at: number; word: string }[]>();
    vocabulary.forEach((word, at) => {
      const list = byLength.get(word.length) ?? [];
      list.push({ at, word });
      byLength.set(word.length, list);
    });
    index = { words: new Set(vocabulary), byLength, near: new Map() };
    indexes.set(vocabulary, index);
  }
  return index;
}

/** The words `close` can accept for a word of `length` letters (one longer or shorter at most), in list order. */
function candidatesOf(index: VocabularyIndex, length: number): readonly string[] {
  let words = index.near.get(length);
  if (!words) {
    const near = [length - 1, length, length + 1].flatMap((l) => index.byLength.get(l) ?? []);
    words = near.sort((a, b) => a.at - b.at).map((c) => c.word);
    index.near.set(length, words);
  }
  return words;
}

function fixWords(text: string, vocabulary: readonly string[], fixed: Set<string>, sameLength = false): string {
  const tokens = text.split(' ');
  const index = indexOf(vocabulary);
  return tokens
    .map((token) => {
      const core = token.replace(/^[^A-Za-z]+|[^A-Za-z]+$/g, '');
      if (core.length < 5 || !/^[A-Za-z]+$/.test(core)) return token;
      const upper = core.toUpperCase();
      if (index.words.has(upper)) return token;
      // A plural or singular of a vocabulary word (`BOOKSTORES`, `BEVERAGE`, `STATIONERS` beside `STATIONERY`: kinds of business) is a
      // word as printed, not a misread.
      const plural = (v: string): boolean =>
        `${v}S` === upper || `${upper}S` === v || (upper.endsWith('S') && upper.slice(0, -1) === v.slice(0, -1));
      const hit = candidatesOf(index, core.length).find(
        (v) => close(core, v) && !plural(v) && (!sameLength || v.length === core.length),
      );
      if (!hit) return token;
      fixed.add(token);
      return swap(token, hit);
    })
    .join(' ');
}

function fixRegions(text: string, fixed: Set<string>, phrases: string[][], minLength = 0): string {
  const tokens = text.split(' ');
  // Each token's letters, made once per line (and again for a token swapped below), not once per phrase tried.
  const letters = tokens.map((t) => t.replace(/[^A-Za-z]/g, ''));
  const fits = (c: string, word: string | undefined): boolean => close(c, word ?? '') || c.toUpperCase() === word;
  for (const phrase of phrases) {
    for (let i = 0; i + phrase.length <= tokens.length; i += 1) {
      if (!fits(letters[i] ?? '', phrase[0])) continue;
      const cores = letters.slice(i, i + phrase.length);
      if (!cores.every((c, k) => fits(c, phrase[k]))) continue;
      if (cores.every((c, k) => c.toUpperCase() === phrase[k])) continue;
      // A word that is itself a place word (`Jalan Pinang`, not `PENANG`: both are place words) is as printed.
      if (cores.some((c, k) => c.toUpperCase() !== phrase[k] && KNOWN_WORDS.has(c.toUpperCase()))) continue;
      // Town words (`minLength`): long ones only, and only a substituted letter.
      const odd = (c: string, k: number): boolean =>
        c.toUpperCase() !== phrase[k] && (c.length < minLength || (minLength > 0 && c.length !== phrase[k]?.length));
      if (cores.some(odd)) continue;
      for (let k = 0; k < phrase.length; k += 1) {
        const token = tokens[i + k] ?? '';
        if (cores[k]?.toUpperCase() === phrase[k]) continue;
        fixed.add(token);
        tokens[i + k] = swap(token, phrase[k] ?? '');
        letters[i + k] = (tokens[i + k] ?? '').replace(/[^A-Za-z]/g, '');
      }
    }
  }
  return tokens.join(' ');
}

/**
 * `0` and `1` inside a word of letters are the `O` and `I`/`l` OCR mistook (`Ja1an`, `C0.`, `F00D`, `1DEA`,
 * `0ld`): runs of them between two letters, a single one opening a word of at least two letters, or a `0` closing a
 * word of letters (`C0`). Words with any other digit, numbers opening a word (`10GRAM`) and codes ending in a
 * number (`U1`, `PJU1`, `1A`, `SEKSYEN10`) are left alone.
 */
export function fixDigitsInWords(text: string, fixed: Set<string>): string {
  return text
    .split(' ')
    .map((token) => {
      const core = token.replace(/[^A-Za-z0-9]/g, '');
      const letters = (core.match(/[A-Za-z]/g) ?? []).length;
      if (!/[01]/.test(core) || /[2-9]/.test(core) || letters < 1) return token;
      const letter = (i: number): string | undefined => (/[A-Za-z]/.test(token[i] ?? '') ? token[i] : undefined);
      const out = token.replace(/[01]+/g, (run: string, at: number) => {
        const before = letter(at - 1);
        const after = letter(at + run.length);
        const opening = at === 0 && run.length === 1 && /^[A-Za-z]{2}/.test(token.slice(1));
        const closing = !after && before && run === '0' && /^[A-Za-z]+0\W*$/.test(token);
        if (!(before && after) && !opening && !closing) return run;
        const lower = /[a-z]/.test(before ?? after ?? '');
        return [...run].map((d) => (d === '0' ? (lower ? 'o' : 'O') : lower ? 'l' : 'I')).join('');
      });
      if (out !== token) fixed.add(token);
      return out;
    })
    .join(' ');
}

/**
 * `5` opening a word of letters is an `S` (`5ubang`, `5ELANGOR`); `O` among the digits of a number is a `0`
 * (`400OO`, `8110O`, postcodes), and so is a `C` or `D` between digits of a long number (`500C0`: the round glyphs
 * PP-OCR confuses); an `O` next to a digit in a hyphenated unit code is a `0` (`A-G-O6`).
 */
export function fixLettersAndNumbers(text: string, fixed: Set<string>): string {
  return text
    .split(' ')
    .map((token) => {
      let out = token.replace(/^5(?=[A-Za-z]{3,}\W*$)/, () => (/[a-z]/.test(token[1] ?? '') ? 's' : 'S'));
      if (/^\d[\dOo]*\d?[Oo][\dOo]*\W*$/.test(out) && (out.match(/\d/g) ?? []).length >= 3) {
        out = out.replace(/[Oo]/g, '0');
      }
      if (/^\d+[CD]\d+\W*$/.test(out) && (out.match(/\d/g) ?? []).length >= 4) out = out.replace(/[CD]/, '0');
      if (/^[A-Z0-9]{1,3}(-[A-Z0-9]{1,3})+\W*$/.test(out) && /\d/.test(out)) {
        out = out.replace(/(?<=-)O(?=\d)|(?<=-\d)O(?=\W|-|$)/g, '0');
      }
      if (out !== token) fixed.add(token);
      return out;
    })
    .join(' ');
}

/** Glyphs OCR mistakes for one another, each mapped to one representative. */
const CONFUSABLE: Record<string, string> = { I: 'L', '1': 'L', '|': 'L', '0': 'O', '5': 'S', '8': 'B' };
const confusableForm = (word: string): string => [...word.toUpperCase()].map((c) => CONFUSABLE[c] ?? c).join('');
const KNOWN_BY_FORM = new Map(
  [...KNOWN_WORDS].filter((w) => w.length >= 4 && /^[A-Z]+$/.test(w)).map((w) => [confusableForm(w), w]),
);

/**
 * A place or street word OCR split in two with a confusable glyph in it (`SHAH AI AM` → `SHAH ALAM`): two adjacent
 * pieces of letters, neither a known word, that joined read as a known word once I/l/1, O/0, S/5 and B/8 are taken
 * as the same glyph.
 */
function joinSplitWords(text: string, fixed: Set<string>): string {
  const tokens = text.split(' ');
  const core = (t: string): string => t.replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  for (let i = 0; i + 1 < tokens.length; i += 1) {
    const a = tokens[i] ?? '';
    const b = tokens[i + 1] ?? '';
    // The second piece may run on past a mark (`AM.SEL.`): only its first run of letters joins.
    const lead = /^[A-Za-z0-9|]+/.exec(b)?.[0] ?? '';
    if (!/^[A-Za-z0-9|]+$/.test(a) || !lead) continue;
    const ca = core(a);
    if (!/[A-Za-z]/.test(ca) || !/[A-Za-z]/.test(lead)) continue;
    if (KNOWN_WORDS.has(ca.toUpperCase()) || KNOWN_WORDS.has(lead.toUpperCase())) continue;
    const known = KNOWN_BY_FORM.get(confusableForm(ca + lead));
    if (!known) continue;
    fixed.add(a);
    fixed.add(b);
    tokens.splice(i, 2, swap(ca + lead, known) + b.slice(lead.length));
  }
  return tokens.join(' ');
}

/**
 * `&` read as `8` between two house numbers of one series: `305083051` is `3050&3051` (two numbers of one length, the
 * second one more than the first) and `7-187-2` is `7-1&7-2` (the block prefix `7-` repeated). An `8` that does
 * not split a number into such a series is a digit.
 */
function ampersandInSeries(text: string, fixed: Set<string>): string {
  const mark = (m: string, out: string): string => {
    if (out !== m) fixed.add(m);
    return out;
  };
  return text
    .replace(/(?<![\d-])(\d{3,})8(\d{3,})(?![\d-])/g, (m: string, a: string, b: string) =>
      mark(m, a.length === b.length && Number(b) === Number(a) + 1 ? `${a}&${b}` : m),
    )
    .replace(/(?<![\d])(\d+)-([0-9A-Z]{1,2})8(?=\1-[0-9A-Z])/g, (m: string, a: string, b: string) =>
      mark(m, `${a}-${b}&`),
    );
}

/** Repairs an address line. */
export function repairAddress(text: string): Repaired {
  const fixed = new Set<string>();
  let out = fixLettersAndNumbers(fixDigitsInWords(text, fixed), fixed).replace(
    /(?<=^|[\s,.])[J3][LIUli1|][NMnm](?=\.?(\s|,|$))/g,
    (m) => {
      fixed.add(m);
      return m === m.toUpperCase() ? 'JLN' : 'Jln';
    },
  );
  out = out
    .split(' ')
    .map((token) => {
      const digitsFixed = token.replace(/&(?=\/\d)/g, '6');
      if (digitsFixed !== token) fixed.add(token);
      return digitsFixed;
    })
    .join(' ');
  if (ruleOn('ampersand-series')) out = ampersandInSeries(out, fixed);
  // `SS12/3A`: a section code whose second S was read as 5 (`S512/3A`).
  if (ruleOn('section-code')) {
    out = out.replace(/(?<![A-Za-z0-9])S5(?=\d{1,2}[A-Z]?\/)/g, (m) => {
      fixed.add(m);
      return 'SS';
    });
  }
  if (ruleOn('split-words')) out = joinSplitWords(out, fixed);
  if (ruleOn('region-repair')) out = fixRegions(out, fixed, REGION_PHRASES);
  if (ruleOn('city-repair')) out = fixRegions(out, fixed, CITY_PHRASES, 6);
  if (ruleOn('street-repair')) out = fixWords(out, LONG_ADDRESS, fixed);
  if (ruleOn('city-repair')) out = fixWords(out, LONG_CITY, fixed, true);
  if (ruleOn('postcode-places')) out = repairByPostcode(out, fixed);
  return { text: out, fixed };
}

/** Repairs a business name line. */
export function repairName(text: string): Repaired {
  const fixed = new Set<string>();
  const digits = fixDigitsInWords(text, fixed);
  return { text: ruleOn('business-repair') ? fixWords(digits, LONG_BUSINESS, fixed) : digits, fixed };
}
