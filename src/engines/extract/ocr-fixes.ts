/**
 * Line-level repair of common OCR slips in names and addresses, against the generic vocabulary only: a word one
 * edit away from a known region, street or business word is read as that word (`Koala Lumpur` → `KUALA LUMPUR`,
 * `PERMNIAGAAN` → `PERNIAGAAN`), the street abbreviation `JLN` misread as `JIN`/`JUN`/`3LN` is restored, and `&`
 * glued to digits is read as the `6` it usually is. Each fix reports which words it touched, so callers can trust
 * those words despite their low OCR confidence.
 */
import { editDistance } from './text-normalize';
import { ADDRESS_WORDS, BUSINESS_WORDS, REGION_WORDS } from './vocabulary';

/** Repaired text and the original words that were changed. */
export interface Repaired {
  text: string;
  fixed: Set<string>;
}

const REGION_PHRASES = REGION_WORDS.map((p) => p.split(' ')).filter((p) => p.every((w) => w.length >= 4));
const LONG_ADDRESS = ADDRESS_WORDS.filter((w) => w.length >= 5 && /^[A-Z]+$/.test(w));
const LONG_BUSINESS = BUSINESS_WORDS.filter((w) => w.length >= 6);

function close(word: string, target: string): boolean {
  const w = word.toUpperCase();
  if (w === target || Math.abs(w.length - target.length) > (target.length >= 7 ? 1 : 0)) return false;
  if (w[0] !== target[0] && target.length < 7) return false;
  return editDistance(w, target, 1) <= 1;
}

/** Replaces the letters of `token` with `canonical` in the token's case, keeping surrounding punctuation. */
function swap(token: string, canonical: string): string {
  const core = /[A-Za-z0-9]+/.exec(token)?.[0] ?? '';
  const cased =
    core === core.toUpperCase()
      ? canonical
      : core === core.toLowerCase()
        ? canonical.toLowerCase()
        : canonical[0] + canonical.slice(1).toLowerCase();
  return token.replace(core, cased);
}

function fixWords(text: string, vocabulary: readonly string[], fixed: Set<string>): string {
  const tokens = text.split(' ');
  return tokens
    .map((token) => {
      const core = token.replace(/^[^A-Za-z]+|[^A-Za-z]+$/g, '');
      if (core.length < 5 || !/^[A-Za-z]+$/.test(core)) return token;
      if (vocabulary.includes(core.toUpperCase())) return token;
      // A plural or singular of a vocabulary word (`BOOKSTORES`, `BEVERAGE`, `STATIONERS` beside `STATIONERY`) is a
      // word as printed, not a misread.
      const upper = core.toUpperCase();
      const plural = (v: string): boolean =>
        `${v}S` === upper || `${upper}S` === v || (upper.endsWith('S') && upper.slice(0, -1) === v.slice(0, -1));
      const hit = vocabulary.find((v) => close(core, v) && !plural(v));
      if (!hit) return token;
      fixed.add(token);
      return swap(token, hit);
    })
    .join(' ');
}

function fixRegions(text: string, fixed: Set<string>): string {
  const tokens = text.split(' ');
  for (const phrase of REGION_PHRASES) {
    for (let i = 0; i + phrase.length <= tokens.length; i += 1) {
      const cores = tokens.slice(i, i + phrase.length).map((t) => t.replace(/[^A-Za-z]/g, ''));
      if (!cores.every((c, k) => close(c, phrase[k] ?? '') || c.toUpperCase() === phrase[k])) continue;
      if (cores.every((c, k) => c.toUpperCase() === phrase[k])) continue;
      for (let k = 0; k < phrase.length; k += 1) {
        const token = tokens[i + k] ?? '';
        if (cores[k]?.toUpperCase() === phrase[k]) continue;
        fixed.add(token);
        tokens[i + k] = swap(token, phrase[k] ?? '');
      }
    }
  }
  return tokens.join(' ');
}

/**
 * `0` and `1` inside a word of letters are the `O` and `I`/`l` OCR mistook (`Ja1an`, `C0.`, `F00DICI0US`, `1DEA`,
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
 * (`400OO`, `8110O`, postcodes).
 */
export function fixLettersAndNumbers(text: string, fixed: Set<string>): string {
  return text
    .split(' ')
    .map((token) => {
      let out = token.replace(/^5(?=[A-Za-z]{3,}\W*$)/, () => (/[a-z]/.test(token[1] ?? '') ? 's' : 'S'));
      if (/^\d[\dOo]*\d?[Oo][\dOo]*\W*$/.test(out) && (out.match(/\d/g) ?? []).length >= 3) {
        out = out.replace(/[Oo]/g, '0');
      }
      if (out !== token) fixed.add(token);
      return out;
    })
    .join(' ');
}

/** Repairs an address line. */
export function repairAddress(text: string): Repaired {
  const fixed = new Set<string>();
  let out = fixLettersAndNumbers(fixDigitsInWords(text, fixed), fixed).replace(
    /(?<=^|[\s,])[J3][LIUli1|][NMnm](?=\.?(\s|,|$))/g,
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
  // `SS15/4B`, `SS21/60`: a section code whose second S was read as 5 (`S515/4B`).
  out = out.replace(/(?<![A-Za-z0-9])S5(?=\d{1,2}[A-Z]?\/)/g, (m) => {
    fixed.add(m);
    return 'SS';
  });
  out = fixRegions(out, fixed);
  out = fixWords(out, LONG_ADDRESS, fixed);
  return { text: out, fixed };
}

/** Repairs a business name line. */
export function repairName(text: string): Repaired {
  const fixed = new Set<string>();
  return { text: fixWords(fixDigitsInWords(text, fixed), LONG_BUSINESS, fixed), fixed };
}
