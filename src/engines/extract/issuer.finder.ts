/**
 * Finds the issuer of a receipt or invoice in its header: the business name and the postal address printed under it
 * (registration lines skipped; contact, tax and title lines end it). Every header line that could be the name is a
 * candidate with its layout evidence (legal-entity suffix, position, size, width, a registration number or an address
 * beside it, title, branch and region words); the name is the candidate whose evidence weighs most under
 * `issuer-weights.ts`, joined with a suffix-only line below it.
 */
import { foundInRows, type FoundValue } from './found-value';
import type { LayoutIndex, Row } from './layout-index';
import { findAmounts } from './value-patterns';
import { cleanAddressLine, cleanName, MIN_WORD_CONFIDENCE, trimEdges, weakestWord } from './issuer-text';
import { editDistance } from './text-normalize';
import * as kind from './line-kinds';
import { LEGAL_SUFFIXES } from './vocabulary';
import { NAME_WEIGHTS, scoreFeatures, type NameFeatures, type NameWeights } from './issuer-weights';
import { repairAddress, repairName } from './ocr-fixes';
import { ruleOn } from './rule-switches';

/** The issuer's name and address lines, either possibly missing. */
export interface Issuer {
  name?: FoundValue;
  nameRows: Row[];
  address?: FoundValue;
  addressRows: Row[];
}

function nameCandidate(row: Row): boolean {
  const text = repairName(cleanName(row.text)).text;
  const letters = (text.match(/[A-Za-z]/g) ?? []).length;
  const alnum = (text.match(/[A-Za-z0-9]/g) ?? []).length;
  if (letters < 3 || letters < alnum * 0.6 || row.confidence < 0.4) return false;
  if (row.confidence < 0.6 && !kind.hasLegalSuffix(text) && !kind.hasBusinessWord(text)) return false;
  if (kind.isStopLine(row.text) || kind.isRegistration(row.text) || kind.isSuffixOnly(text)) return false;
  if (kind.isCourtesy(text)) return false;
  // Street words make a line an address, unless it also names a kind of business and carries no number.
  const named = kind.hasLegalSuffix(text) || (kind.hasBusinessWord(text) && !/\d/.test(text));
  return named || !(kind.isAddressLike(repairAddress(text).text) || kind.hasRegion(text));
}

function headerEnd(lines: Row[]): number {
  const cap = Math.max(8, Math.ceil(lines.length * 0.45));
  // Barely legible lines (a logo, scanner noise) read as stray numbers do not end the header.
  const end = lines.findIndex(
    (l, i) => i > 0 && l.confidence >= 0.5 && findAmounts(l.text).length > 0 && !kind.isAddressLike(l.text),
  );
  return Math.min(cap, end < 0 ? lines.length : end);
}

/**
 * A line that only says what kind of business it is (`BISTRO & CAFE`, `RESTAURANT`): a description printed under
 * the name, not the name, so it earns no business-word credit.
 */
function kindOnly(text: string): boolean {
  const words = kind.upperTokens(text).filter((t) => !['&', 'AND', 'N'].includes(t));
  return words.length > 0 && words.every((t) => kind.hasBusinessWord(t));
}

/** The evidence for one candidate (its rows joined), before the address test `pickName` adds. */
function nameFeatures(row: Row, rank: number, afterTitle: boolean, rowHeight: number, widest: number): NameFeatures {
  const text = repairName(cleanName(row.text)).text;
  const letters = text.replace(/[^A-Za-z]/g, '');
  const upper = letters.replace(/[^A-Z]/g, '').length / Math.max(1, letters.length);
  const legal = kind.hasLegalSuffix(text);
  return {
    ocr: row.confidence,
    rank,
    legal: legal ? 1 : 0,
    business: !legal && kind.hasBusinessWord(text) && !kindOnly(text) ? 1 : 0,
    upper: upper >= 0.8 ? 1 : 0,
    // Businesses print their names capitalised; an all-lower-case line up top is a handwritten or personal note.
    lower: letters.length > 0 && letters === letters.toLowerCase() ? 1 : 0,
    tall: row.box.y1 - row.box.y0 >= 1.3 * rowHeight ? 1 : 0,
    wide: Math.min(1, (row.box.x1 - row.box.x0) / Math.max(1, widest)),
    afterTitle: afterTitle ? 1 : 0,
    addressBelow: 0,
    registration: 0,
    region: kind.hasRegion(text) ? 1 : 0,
    branch: kind.isBranchLabel(text) ? 1 : 0,
  };
}

/** `below` is printed right under `above` (no blank line between) and centred or aligned with it. */
function stacked(above: Row, below: Row, rowHeight: number, overlapOnly = false): boolean {
  if (above.page !== below.page) return false;
  const gap = below.box.y0 - above.box.y1;
  if (gap > 0.8 * rowHeight || below.box.y0 <= above.box.y0) return false;
  if (overlapOnly) return Math.min(above.box.x1, below.box.x1) > Math.max(above.box.x0, below.box.x0);
  const centre = (r: Row): number => (r.box.x0 + r.box.x1) / 2;
  const width = Math.max(above.box.x1 - above.box.x0, below.box.x1 - below.box.x0);
  return (
    Math.abs(centre(above) - centre(below)) < 0.15 * width || Math.abs(above.box.x0 - below.box.x0) < 0.5 * rowHeight
  );
}

/**
 * A line printed right above a legal name that reads as the first half of that name (`SRI CONTOH VEGETARIAN`
 * over `RESTAURANT SDN BHD`): letters, no legal suffix of its own, not contact, address, title or registration data.
 * Over a suffix-only line (`Sdn Bhd`, `regionOk`), any overlap will do and region words (`... MALAYSIA`) are allowed.
 */
function nameHead(row: Row | undefined, name: Row, rowHeight: number, regionOk = false): boolean {
  if (!row || !stacked(row, name, rowHeight, regionOk) || row.confidence < 0.6) return false;
  const text = cleanName(row.text);
  const letters = (text.match(/[A-Za-z]/g) ?? []).length;
  const alnum = (text.match(/[A-Za-z0-9]/g) ?? []).length;
  if (letters < 3 || letters < alnum * 0.6 || text === text.toLowerCase()) return false;
  if (kind.hasLegalSuffix(text) || kind.isStopLine(row.text) || kind.isRegistration(row.text)) return false;
  if (kind.isCourtesy(text) || kind.isTitleLine(row) || kind.isAddressLike(text)) return false;
  return regionOk || !kind.hasRegion(text);
}

/** Words that continue a name on the line below it (`CONTOH HARDWARE` / `TRADING`). */
const CONTINUATION = new Set(['TRADING', 'ENTERPRISE', 'ENTERPRISES', 'CO', 'COMPANY', 'INDUSTRIES', 'HOLDINGS']);
const continues = (text: string): boolean => {
  const tokens = kind.upperTokens(text);
  return tokens.length > 0 && tokens.every((t) => CONTINUATION.has(t));
};

/**
 * A legal name that cannot stand alone: it opens with a joining mark (`& TEA HOUSE (M) SDN. BHD.`, `(KAJANG) SDN
 * BHD`) or names no more than a kind of business (`RESTAURANT SDN BHD`), so its first half is on the line above.
 */
function incomplete(rows: Row[]): boolean {
  const printed = rows.map((r) => r.text).join(' ');
  const text = cleanName(printed);
  if (!kind.hasLegalSuffix(text)) return false;
  if (/^\W*(&|and\b|\()/i.test(printed)) return true;
  const words = kind.upperTokens(text).filter((t) => !LEGAL_WORDS.has(t) && !/^(M|CO)$/.test(t));
  return words.length > 0 && words.every((t) => kind.hasBusinessWord(t));
}
const LEGAL_WORDS = new Set(LEGAL_SUFFIXES.flatMap((s) => s.split(' ')));

/** The first line from `from` that is not a registration number is part of a postal address. */
function addressBelow(lines: Row[], from: number): boolean {
  for (let i = from; i < Math.min(lines.length, from + 2); i += 1) {
    const row = lines[i];
    if (!row || kind.isRegistration(row.text)) continue;
    return kind.isAddressLike(row.text) && !kind.isStopLine(row.text) && !kind.isTitleLine(row);
  }
  return false;
}

/** A header line (or lines) that may be the business name, with the evidence for it. */
export interface NameCandidate {
  rows: Row[];
  features: NameFeatures;
}

/** Every line of the header that may be the business name, in reading order, each with its evidence. */
function nameCandidates(index: LayoutIndex, lines: Row[], end: number): NameCandidate[] {
  const out: NameCandidate[] = [];
  const widest = Math.max(1, ...lines.slice(0, end).map((l) => l.box.x1 - l.box.x0));
  let afterTitle = false;
  for (let i = 0; i < end; i += 1) {
    const row = lines[i];
    if (!row) continue;
    const next = lines[i + 1];
    const suffixBelow = !!next && i + 1 < end && kind.isSuffixOnly(cleanName(next.text));
    // A name printed over two lines, its suffix alone on the second: region words (`... MALAYSIA`) are then part of it.
    if (nameCandidate(row) || (suffixBelow && nameHead(row, next, index.rowHeight, true))) {
      const continued = ruleOn('name-continuation') && next && i + 1 < end && continues(next.text);
      let rows = suffixBelow || continued ? [row, next] : [row];
      const first = rows[0] as Row;
      const head = lines[i - 1];
      if (ruleOn('name-head') && incomplete(rows) && nameHead(head, first, index.rowHeight)) {
        rows = [head as Row, ...rows];
      }
      const joined = { ...row, text: rows.map((r) => r.text).join(' ') };
      const features = nameFeatures(joined, out.length, afterTitle, index.rowHeight, widest);
      // The issuer's name heads its address: a street line right under a business name (past a registration line)
      // is evidence for it.
      const clean = cleanName(joined.text);
      const named = kind.hasLegalSuffix(clean) || (kind.hasBusinessWord(clean) && !kindOnly(clean));
      const after = lines.indexOf(rows[rows.length - 1] as Row) + 1;
      if (named && addressBelow(lines, after)) features.addressBelow = 1;
      if (registrationBeside(joined.text, lines[after])) features.registration = 1;
      out.push({ rows, features });
    }
    if (kind.isTitleLine(row)) afterTitle = true;
  }
  return out;
}

/** A registration number on the name's own line (`... SDN BHD (123456-X)`) or on the line right under it. */
function registrationBeside(printed: string, below: Row | undefined): boolean {
  const own = /[A-Z]{0,4}\d{4,}\s?-\s?[A-Z0-9]{1,3}\b/i.test(printed) || /\b(co\.?\s*(reg|no)|roc)\b/i.test(printed);
  return own || (!!below && kind.isRegistration(below.text));
}

/** The best-scoring candidate under `weights` (the first of equals), or undefined when there is none. */
function pickName(
  candidates: NameCandidate[],
  weights: NameWeights,
): { candidate: NameCandidate; margin: number } | undefined {
  let best: { c: NameCandidate; score: number } | undefined;
  let second = Number.NEGATIVE_INFINITY;
  for (const c of candidates) {
    const score = scoreFeatures(c.features, weights);
    if (!best || score > best.score) {
      if (best) second = best.score;
      best = { c, score };
    } else second = Math.max(second, score);
  }
  return best && { candidate: best.c, margin: best.score - second };
}

/**
 * How far the chosen name's score stands above the runner-up's, as a 0..1 factor of its confidence: a close call
 * between two header lines is less sure than a lone candidate.
 */
const marginFactor = (margin: number): number => 0.6 + 0.4 * Math.min(1, margin / MARGIN_SURE);
/** How much a digit inside a word of a name lowers its confidence. */
const MISREAD_FACTOR = 0.6;
/** A score lead at which the choice of name counts as settled. */
const MARGIN_SURE = 2;

/**
 * The legibility a name or address is reported with: the mean OCR confidence of its lines pulled down by its least
 * legible word (a misread is usually one word).
 */
const legibility = (mean: number, weakest: number): number => (mean + Math.min(mean, weakest)) / 2;

const sameColumn = (a: Row, b: Row): boolean => Math.min(a.box.x1, b.box.x1) - Math.max(a.box.x0, b.box.x0) > 0;

/**
 * A branch or outlet line under the name (`CONTOH CAFE PLAZA MAJU`, `CONTOH'S PIZZA TAMAN DESA`): it repeats
 * a word of the business name, carries no number, and a numbered address line follows it. Street words in it
 * (`PLAZA`, `TAMAN`) name the outlet's place, not the postal address.
 */
function outletName(row: Row, next: Row | undefined, nameWords: Set<string>): boolean {
  if (/\d/.test(row.text) || !next || !/\d/.test(next.text) || !kind.isAddressLike(next.text)) return false;
  return kind.upperTokens(row.text.replace(/['’`]/g, '')).some((t) => nameWords.has(t));
}

/** A title that opens another party's block (`Bill to`, `Customer`): an address after it is not the issuer's. */
const PARTY_TITLE = /\b(bill(ed)?\s*to|sold\s*to|ship(ped)?\s*to|deliver(ed|y)?\s*to|customer|client|buyer)\b/i;

/** A numbered street line (`NO7, JLN ...`, `12 Main Street`): what an address printed under the title must be. */
const streetLine = (text: string): boolean =>
  /\d/.test(text) && !kind.hasPostcode(text) && kind.isAddressLike(text.replace(/\b\d{5}\b/g, ''));

/**
 * An address cannot open with its postcode (`40000 SHAH ALAM`): the plain lines stacked right above it, under the
 * name (`KAMPUNG CONTOH BARAT`), are its street lines even without a street word the vocabulary knows.
 */
function postcodeHead(plain: Row[], row: Row, nameRow: Row): Row[] {
  if (!/^\W*\d{5}\b/.test(row.text) || plain.length === 0 || plain.length > 2) return [];
  const chain = [nameRow, ...plain, row];
  const rowHeight = Math.min(...chain.map((r) => r.box.y1 - r.box.y0));
  for (let k = 1; k < chain.length; k += 1) {
    if (!stacked(chain[k - 1] as Row, chain[k] as Row, rowHeight * 1.5, true)) return [];
  }
  return plain.every((r) => r.confidence >= 0.6 && /[A-Za-z]{3}/.test(r.text) && !kind.isCourtesy(r.text)) ? plain : [];
}

function pickAddress(lines: Row[], from: number, nameRow: Row, name: Row[]): Row[] {
  const nameWords = new Set(
    kind
      .upperTokens(name.map((r) => r.text.replace(/['’`]/g, '')).join(' '))
      .filter((t) => t.length >= 4 && !kind.hasBusinessWord(t) && !LEGAL_WORDS.has(t)),
  );
  const out: Row[] = [];
  let skipped = 0;
  let postcodeSeen = false;
  let afterTitle = false;
  // Plain lines between the name and the first address line, in case that line turns out to be a postcode line.
  let plain: Row[] = [];
  for (let i = from; i < lines.length && out.length < 6; i += 1) {
    const row = lines[i];
    if (!row || row.page !== nameRow.page || !sameColumn(row, nameRow)) continue;
    const text = row.text;
    if (out.length === 0) {
      if (ruleOn('outlet-line') && outletName(row, lines[i + 1], nameWords)) continue;
      const other = kind.isStopLine(text) || kind.isTitleLine(row) || kind.isRegistration(text);
      const underTitle = afterTitle && (!ruleOn('street-under-title') || !streetLine(text));
      if (kind.isAddressLike(text) && !other && !underTitle) {
        out.push(...(ruleOn('postcode-head') ? postcodeHead(plain, row, nameRow) : []), row);
        postcodeSeen = kind.hasPostcode(text);
      } else if (++skipped > 4 || (kind.isTitleLine(row) && (afterTitle || PARTY_TITLE.test(text)))) break;
      else if (kind.isTitleLine(row)) afterTitle = true;
      plain = other || afterTitle ? [] : [...plain, row];
      continue;
    }
    if (kind.isStopLine(text) || kind.isTitleLine(row) || kind.isRegistration(text) || kind.isLabelledField(text)) {
      break;
    }
    // After the postcode (or under the title) only region or street lines continue it, or any line after a comma.
    const open = ruleOn('comma-continues') && /,\s*$/.test(out[out.length - 1]?.text ?? '');
    if ((postcodeSeen || afterTitle) && !open && !kind.hasRegion(text) && !kind.isAddressLike(text)) break;
    out.push(row);
    postcodeSeen ||= kind.hasPostcode(text);
  }
  return postcodeSeen || out.some((r) => kind.isAddressLike(r.text)) ? out : [];
}

function nameOf(rows: Row[], margin: number): FoundValue | undefined {
  const repaired = repairName(cleanName(rows.map((r) => r.text).join(' ')));
  const weakest = weakestWord(rows, repaired.fixed);
  if (weakest < MIN_WORD_CONFIDENCE) return undefined;
  const text = repaired.text;
  // A digit between the letters of a word (`EK9L05IF`) is a misread in a name, whatever the OCR confidence says.
  const misread = /[A-Za-z]\d+[A-Za-z]/.test(text) ? MISREAD_FACTOR : 1;
  const strength =
    (kind.hasLegalSuffix(text) ? 0.95 : kind.hasBusinessWord(text) ? 0.8 : 0.6) * marginFactor(margin) * misread;
  const found = foundInRows(rows, text, strength);
  return found && { ...found, ocr: legibility(found.ocr, weakest) };
}

/**
 * An address names its street and area more than once (`Jalan Contoh ... Pusat Bandar Contoh`, `Jalan Maju ...
 * Bandar Baru Maju Jaya`): a word of five letters or more printed one edit away from another word of the same block
 * is a misread of it when the other is printed more often, or as often and longer (OCR drops letters more often than it
 * invents them). Words as different as two edits, or short, are left as printed.
 */
function agreeWords(lines: string[], fixed: Set<string>): string[] {
  const count = new Map<string, number>();
  for (const line of lines) {
    for (const w of line.match(/[A-Za-z]{5,}/g) ?? []) {
      count.set(w.toUpperCase(), (count.get(w.toUpperCase()) ?? 0) + 1);
    }
  }
  const better = (word: string): string | undefined => {
    const upper = word.toUpperCase();
    const n = count.get(upper) ?? 0;
    for (const [other, m] of count) {
      if (other === upper || other[0] !== upper[0] || editDistance(upper, other, 1) > 1) continue;
      if (m > n || (m === n && other.length > upper.length)) return other;
    }
    return undefined;
  };
  return lines.map((line) =>
    line.replace(/(?<![A-Za-z])[A-Za-z]{5,}(?![A-Za-z])/g, (word: string) => {
      const other = better(word);
      if (!other) return word;
      fixed.add(word);
      if (word === word.toUpperCase()) return other;
      return word === word.toLowerCase() ? other.toLowerCase() : other[0] + other.slice(1).toLowerCase();
    }),
  );
}

function addressOf(rows: Row[]): FoundValue | undefined {
  const fixed = new Set<string>();
  const repaired = rows.map((r) => {
    const line = repairAddress(cleanAddressLine(r.text));
    for (const w of line.fixed) fixed.add(w);
    return line.text;
  });
  const lines = ruleOn('address-agreement') ? agreeWords(repaired, fixed) : repaired;
  const weakest = weakestWord(rows, fixed);
  if (rows.length === 0 || weakest < MIN_WORD_CONFIDENCE) return undefined;
  // A block that reaches its postcode is complete more often than one that stops before it.
  const strength = rows.some((r) => kind.hasPostcode(r.text)) ? 0.85 : 0.6;
  const found = foundInRows(rows, lines.join(' '), strength, lines);
  return found && { ...found, ocr: legibility(found.ocr, weakest) };
}

/** The header lines of the first page, edge specks trimmed, and where the header ends. */
function headerOf(index: LayoutIndex): { lines: Row[]; end: number } {
  const firstPage = index.lines[0]?.page;
  const lines = index.lines.filter((l) => l.page === firstPage).map(trimEdges);
  return { lines, end: headerEnd(lines) };
}

/** The issuer block that follows from choosing `candidate` as the name. */
function issuerFrom(lines: Row[], candidate: NameCandidate | undefined, margin: number): Issuer {
  if (!candidate) return { nameRows: [], addressRows: [] };
  const last = candidate.rows[candidate.rows.length - 1];
  const addressRows = last ? pickAddress(lines, lines.indexOf(last) + 1, last, candidate.rows) : [];
  const out: Issuer = { nameRows: candidate.rows, addressRows };
  const name = nameOf(candidate.rows, margin);
  const address = addressOf(addressRows);
  if (name) out.name = name;
  if (address) out.address = address;
  return out;
}

/** Finds the issuer's name and address in the header of the first page. */
export function findIssuer(index: LayoutIndex, weights: NameWeights = NAME_WEIGHTS): Issuer {
  const { lines, end } = headerOf(index);
  const picked = pickName(nameCandidates(index, lines, end), weights);
  return issuerFrom(lines, picked?.candidate, picked?.margin ?? 0);
}

/**
 * Every name candidate with the issuer block it would lead to, for the receipts bench: it measures the evidence once
 * per receipt and then fits and scores weights without reading the layouts again.
 */
export function issuerChoices(index: LayoutIndex): { features: NameFeatures; issuer: () => Issuer }[] {
  const { lines, end } = headerOf(index);
  return nameCandidates(index, lines, end).map((c) => {
    let issuer: Issuer | undefined;
    return { features: c.features, issuer: () => (issuer ??= issuerFrom(lines, c, MARGIN_SURE)) };
  });
}
