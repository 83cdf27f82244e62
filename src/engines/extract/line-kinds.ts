/**
 * What kind of line a header line is: part of a postal address, a legal-entity name, registration or contact data, a
 * document title or transaction detail. The issuer finder walks the top of a document with these predicates.
 */
import { findLabels } from './label-matcher';
import type { Row } from './layout-index';
import { findAmounts, findDates, findEmails, findPhones, findUrls, POSTCODE_RE } from './value-patterns';
import {
  ADDRESS_WORDS,
  BRANCH_WORDS,
  BUSINESS_WORDS,
  COURTESY_WORDS,
  LEGAL_SUFFIXES,
  REGION_WORDS,
  STOP_CUES,
} from './vocabulary';

/** Upper-case word tokens (dots dropped, `/` and `&` kept): `No.53 Jalan` → `NO 53 JALAN`. */
export const upperTokens = (text: string): string[] =>
  text
    .toUpperCase()
    .replace(/\./g, ' ')
    .split(/[^A-Z0-9/&]+/)
    .filter(Boolean);

const has = (tokens: string[], phrase: string): boolean => ` ${tokens.join(' ')} `.includes(` ${phrase} `);
/** The tokens as one spaced line, for `lineHas` (joined once per line, not once per phrase tried). */
const spaced = (tokens: string[]): string => ` ${tokens.join(' ')} `;
/** `has(tokens, phrase)` for a line made by `spaced` and a phrase made by `padded`. */
const lineHas = (line: string, phrase: string): boolean => line.includes(phrase);
const padded = (phrases: readonly string[]): string[] => phrases.map((p) => ` ${p} `);
const REGION_PADDED = padded(REGION_WORDS);
const STOP_CUES_PADDED = padded(STOP_CUES);
const ADDRESS = new Set(ADDRESS_WORDS);
const STRONG_ADDRESS = new Set(
  ADDRESS_WORDS.filter((w) => w.length >= 4 && !['PARK', 'UNIT', 'PLACE', 'WAY'].includes(w)),
);
const LEGAL = new Set(LEGAL_SUFFIXES);
const SHORT_LEGAL = new Set([
  'SDN',
  'BHD',
  'S/B',
  'PLT',
  'LTD',
  'LLC',
  'LLP',
  'INC',
  'PLC',
  'PTE',
  'PTY',
  'GMBH',
  'CORP',
]);
const BUSINESS = new Set(BUSINESS_WORDS);

/** A street/area word with a number on the line, a strong street word, or a postcode. */
export function isAddressLike(text: string): boolean {
  const tokens = upperTokens(text);
  if (tokens.some((t) => STRONG_ADDRESS.has(t))) return true;
  if (hasPostcode(text)) return true;
  // A house or lot number opening the line: `216, ...`, `12-1, ...`, `No. 5A, ...`.
  if (/^\W*(no\.?:?\s*)?\d+[A-Z]?(-\d+[A-Z]?)*\s*,/i.test(text)) return true;
  const digits = /\d/.test(text);
  return digits && tokens.some((t, i) => ADDRESS.has(t) || (ADDRESS.has(t.replace(/\d+$/, '')) && i === 0));
}

export const hasPostcode = (text: string): boolean => POSTCODE_RE.test(text);

/** The line names a region or country (a state line, `MALAYSIA`). */
export const hasRegion = (text: string): boolean => {
  const line = spaced(upperTokens(text));
  return REGION_PADDED.some((r) => lineHas(line, r));
};

/** The line carries a legal-entity suffix among its last two words (`... SDN BHD`, `... LTD`). */
export function hasLegalSuffix(text: string): boolean {
  const tokens = upperTokens(text);
  if (has(tokens, 'SDN BHD') || has(tokens, 'S/B')) return true;
  return tokens.slice(-2).some((t) => SHORT_LEGAL.has(t) || (LEGAL.has(t) && tokens.length > 1 && t === tokens.at(-1)));
}

/** A greeting or footer line (`THANK YOU`, `WELCOME`, `CUSTOMER COPY`), never a business name. */
export const isCourtesy = (text: string): boolean => upperTokens(text).some((t) => COURTESY_WORDS.includes(t));

/** A branch, outlet or staff label (`OUTLET: MID VALLEY`, `CASHIER 03`): never the business name itself. */
export const isBranchLabel = (text: string): boolean => upperTokens(text).some((t) => BRANCH_WORDS.includes(t));

export const hasBusinessWord = (text: string): boolean => upperTokens(text).some((t) => BUSINESS.has(t));

/** The line is only suffix material (`CO. (M) SDN BHD`): it continues the company name above it. */
export function isSuffixOnly(text: string): boolean {
  const tokens = upperTokens(text);
  return tokens.length > 0 && tokens.every((t) => LEGAL.has(t) || ['CO', 'COMPANY', 'M', 'S/B'].includes(t));
}

/** A registration number line (`(1125830-V)`, `Co. No. 113825-X`, `Company No : SA0099552-P`). */
export function isRegistration(text: string): boolean {
  const t = text.trim();
  if (/^\W*(co\.?\s*(reg|no)|company\s*(reg|no)|roc|reg(istration)?\.?\s*no|business\s*reg)/i.test(t)) return true;
  // A registration number (`795225-A`, `JM0352019-K`) with at most a few label words around it.
  const number = /[A-Z]{0,4}\d{4,}\s?-\s?[A-Z0-9]{1,3}\b/i.exec(t);
  if (!number || isAddressLike(t.replace(number[0], ''))) return false;
  const rest = t.replace(number[0], '').replace(/\b(co|company|reg|regn|registration|no|roc|ssm|rey)\b/gi, '');
  return (rest.match(/[A-Za-z]/g) ?? []).length <= 3;
}

const STOP_PREFIXES = ['TEL', 'FAX', 'GST', 'EMAIL', 'PHONE', 'HP', 'MOBILE'];

/** Contact, registration, title or transaction data: ends an address block. */
export function isStopLine(text: string): boolean {
  const tokens = upperTokens(text);
  const line = spaced(tokens);
  if (STOP_CUES_PADDED.some((cue) => lineHas(line, cue))) return true;
  if (tokens.some((t) => STOP_PREFIXES.some((p) => t.startsWith(p) && t.length <= p.length + 4 && !/\d{3}/.test(t)))) {
    return true;
  }
  if (findEmails(text).length > 0 || findUrls(text).length > 0 || findDates(text).length > 0) return true;
  if (findAmounts(text).length > 0 && !isAddressLike(text)) return true;
  const letters = (text.match(/[A-Za-z]/g) ?? []).length;
  return findPhones(text).length > 0 && letters < 4;
}

const TITLE_PHRASES =
  'tax invoice|invoice|receipt|official receipt|cash bill|bill|cash sale|cash receipt|sales receipt|cashier|date|doc no|invoice no|receipt no|slip|bill to|sold to|ship to|customer|table|order no|quotation|delivery order|statement'.split(
    '|',
  );

/** A document title or transaction detail line (`TAX INVOICE`, `Cashier: ...`, `Bill to`). */
export const isTitleLine = (row: Row): boolean => findLabels(row, TITLE_PHRASES).length > 0;

/**
 * A `Label: value` line whose label is not an address word (`Document No : TD0116`, `Server: Anna`): a field of the
 * document, never the continuation of an address (`No: G3, Blk G` and `Lot: 5` are address lines).
 */
export function isLabelledField(text: string): boolean {
  const label = /^\W*([A-Za-z]+)(?:\s+[A-Za-z]+)?\.?\s*[:#]/.exec(text);
  return !!label && !ADDRESS.has((label[1] ?? '').toUpperCase());
}
