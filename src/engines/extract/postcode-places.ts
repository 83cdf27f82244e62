/**
 * An address's postcode names its town and state, so a town or state the OCR garbled beside a postcode it read
 * right can be read back (`40150 S WH ALAM SE ANGOR` → `40150 SHAH ALAM SELANGOR`, `80300 Johor Bahro` → `Johor
 * Bahru`). The evidence is two-sided: the postcode must be a real one, and the words after it must already be
 * close to that postcode's own town (or state), within a distance that grows with the name's length; a town the
 * receipt names differently from the gazetteer (`45600 BESTARI JAYA`) is far from it and stays as printed. A postcode
 * split in two (`40 150`) is joined, and one with a letter for a digit (`S6100`) is read back, when the number is a
 * real postcode and its town follows.
 *
 * The gazetteer is generated from the public `malaysia-postcodes` package (postcode-places.generated.ts), never from
 * receipts.
 */
import { POSTCODE_PLACES } from './postcode-places.generated';
import { editDistance } from './text-normalize';

interface Place {
  town: string;
  state: string;
}

let placeByPostcode: ReadonlyMap<string, Place> | undefined;

/** The town and state of each postcode (a postcode shared by two towns keeps neither: the evidence is split). */
function places(): ReadonlyMap<string, Place> {
  if (placeByPostcode) return placeByPostcode;
  const map = new Map<string, Place | null>();
  for (const [town, state, codes] of POSTCODE_PLACES) {
    for (const code of codes.split(' ')) map.set(code, map.has(code) ? null : { town, state });
  }
  placeByPostcode = new Map([...map].filter((e): e is [string, Place] => e[1] !== null));
  return placeByPostcode;
}

/** The place a postcode belongs to, if it is a known one. */
export function placeOfPostcode(code: string): Place | undefined {
  return places().get(code);
}

const letters = (s: string): string => s.toUpperCase().replace(/[^A-Z]/g, '');

/** How far a reading may be from a name of this many letters: none under 5, one under 8, else two. */
function allowedSlips(length: number): number {
  return length < 5 ? 0 : length < 8 ? 1 : 2;
}

/** The canonical name in the case of the words it replaces, keeping the punctuation after the last one. */
function inCaseOf(tokens: readonly string[], name: string): string {
  const core = tokens.join(' ');
  const trailing = /[^A-Za-z0-9]*$/.exec(tokens[tokens.length - 1] ?? '')?.[0] ?? '';
  const upper = core.replace(/[^A-Z]/g, '').length;
  const lower = core.replace(/[^a-z]/g, '').length;
  const cased = upper >= lower ? name : name.toLowerCase().replace(/(^|\s)[a-z]/g, (m) => m.toUpperCase());
  return cased + trailing;
}

/**
 * Reads the words from `start` as `name` when some run of them (one to one more than the name's words) is within
 * the allowed slips of it and is not it already; returns the index after the name, or -1 when it does not follow.
 */
function readNameAt(tokens: string[], start: number, name: string, fixed: Set<string>): number {
  const target = letters(name);
  const allowed = allowedSlips(target.length);
  const words = name.split(' ').length;
  let best: { end: number; distance: number } | undefined;
  for (let end = start + 1; end <= Math.min(tokens.length, start + words + 1); end += 1) {
    const span = tokens.slice(start, end);
    if (span.some((t) => /\d/.test(t))) break;
    const distance = editDistance(letters(span.join(' ')), target, allowed);
    if (distance <= allowed && (!best || distance < best.distance)) best = { end, distance };
  }
  if (!best) return -1;
  if (best.distance > 0) {
    const span = tokens.slice(start, best.end);
    span.forEach((t) => fixed.add(t));
    tokens.splice(start, best.end - start, ...inCaseOf(span, name).split(' '));
    return start + words;
  }
  return best.end;
}

/** Letters OCR reads for digits in a number. */
const GLYPH_DIGITS: Readonly<Record<string, string>> = { S: '5', O: '0', I: '1', l: '1', B: '8', Z: '2' };

/** The index of the token holding the address's postcode (a split one joined in place), or -1. */
function postcodeToken(tokens: string[], fixed: Set<string>): number {
  for (let i = tokens.length - 1; i >= 0; i -= 1) {
    const code = /(?<!\d)(\d{5})[^A-Za-z0-9]*$/.exec(tokens[i] as string)?.[1];
    if (code && placeOfPostcode(code)) return i;
  }
  // A postcode with a glyph misread (`S6100`) is read back when its town follows.
  for (let i = tokens.length - 1; i >= 0; i -= 1) {
    const match = /^([0-9SOIlBZ]{5})([^A-Za-z0-9]*)$/.exec(tokens[i] as string);
    if (!match || (match[1] as string).replace(/\D/g, '').length < 3) continue;
    const code = (match[1] as string).replace(/[SOIlBZ]/g, (g) => GLYPH_DIGITS[g] as string);
    const place = placeOfPostcode(code);
    if (!place || readNameAt([...tokens], i + 1, place.town, new Set()) < 0) continue;
    fixed.add(tokens[i] as string);
    tokens[i] = code + (match[2] as string);
    return i;
  }
  for (let i = tokens.length - 2; i >= 0; i -= 1) {
    const [head, tail] = [tokens[i] as string, tokens[i + 1] as string];
    if (!/^\d{2}$/.test(head) || !/^\d{3}[,.]?$/.test(tail)) continue;
    const code = head + tail.slice(0, 3);
    const place = placeOfPostcode(code);
    if (!place || readNameAt([...tokens], i + 2, place.town, new Set()) < 0) continue;
    fixed.add(head);
    fixed.add(tail);
    tokens.splice(i, 2, code + tail.slice(3));
    return i;
  }
  return -1;
}

/** The address with its town and state read back from its postcode where the OCR garbled them. */
export function repairByPostcode(text: string, fixed: Set<string>): string {
  const tokens = text.split(' ');
  const at = postcodeToken(tokens, fixed);
  if (at < 0) return text;
  const code = /(\d{5})[^A-Za-z0-9]*$/.exec(tokens[at] as string)?.[1] as string;
  const place = placeOfPostcode(code) as Place;
  const afterTown = readNameAt(tokens, at + 1, place.town, fixed);
  const state = place.state.replace(/^WP /, '');
  if (afterTown >= 0 && !place.state.startsWith('WP ')) readNameAt(tokens, afterTown, state, fixed);
  return tokens.join(' ');
}
