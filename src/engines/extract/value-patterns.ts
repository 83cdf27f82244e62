/**
 * Value patterns: where in a line of text a date, a money amount, a phone number, an e-mail address, a URL or an
 * identifier sits, with its printed form kept verbatim and a parsed form next to it. The finders decide which match
 * belongs to which field; this module only recognises shapes.
 */

/** One match in a text: character offsets, the printed substring, and the parsed value. */
export interface PatternMatch<T> {
  start: number;
  end: number;
  text: string;
  value: T;
}

export interface ParsedDate {
  year: number;
  month: number;
  day: number;
  /** `HH:MM[:SS]` when a time follows the date in the same text. */
  time?: string;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH =
  '(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\\.?(?![a-z])';

function validDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1 || year < 1900 || year > 2100) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const dim = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
  return day <= dim;
}

const fullYear = (y: string): number => (y.length === 2 ? 2000 + Number(y) : Number(y));

const DATE_RULES: { re: RegExp; pick: (m: RegExpExecArray) => [number, number, number] }[] = [
  { re: /(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)/g, pick: (m) => [Number(m[1]), Number(m[2]), Number(m[3])] },
  {
    re: new RegExp(
      `(?<![\\da-z])(\\d{1,2})(?:st|nd|rd|th)?[-/. ]{0,2}${MONTH}[-/., ]{0,3}(\\d{4}|\\d{2})(?!\\d)`,
      'gi',
    ),
    pick: (m) => [fullYear(m[3] ?? ''), monthIndex(m[2]), Number(m[1])],
  },
  {
    re: new RegExp(`(?<![a-z])${MONTH} (\\d{1,2})(?:st|nd|rd|th)?,? (\\d{4})(?!\\d)`, 'gi'),
    pick: (m) => [Number(m[3]), monthIndex(m[1]), Number(m[2])],
  },
  // A four-digit year OCR ran into the time printed after it (`10/10/20174:22:12 PM`).
  {
    re: /(?<![\d/.-])(\d{1,2})[-/.](\d{1,2})[-/.](\d{4})(?=\d{1,2}:\d{2})/g,
    pick: (m) => dayFirst(m),
  },
  // Day first, as printed on most of the world's receipts; the ISO form decides for month-first when day > 12.
  {
    re: /(?<![\d/.-])(\d{1,2})[-/.](\d{1,2})[-/.](\d{4}|\d{2})(?![\d/]|\.\d)/g,
    pick: (m) => dayFirst(m),
  },
];

function dayFirst(m: RegExpExecArray): [number, number, number] {
  const a = Number(m[1]);
  const b = Number(m[2]);
  return b > 12 && a <= 12 ? [fullYear(m[3] ?? ''), a, b] : [fullYear(m[3] ?? ''), b, a];
}

function monthIndex(name: string | undefined): number {
  return MONTHS.indexOf((name ?? '').slice(0, 3).toLowerCase()) + 1;
}

const TIME_RE = /(?<!\d)([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?(?:\s*([AaPp])\.?[Mm]\.?)?(?!\d)/;

/** Every well-formed calendar date in `text`, earliest first. */
export function findDates(text: string): PatternMatch<ParsedDate>[] {
  const out: PatternMatch<ParsedDate>[] = [];
  for (const rule of DATE_RULES) {
    for (const m of text.matchAll(rule.re)) {
      const start = m.index;
      const end = start + m[0].length;
      if (out.some((o) => start < o.end && end > o.start)) continue;
      const [year, month, day] = rule.pick(m);
      if (!validDate(year, month, day)) continue;
      const value: ParsedDate = { year, month, day };
      const time = TIME_RE.exec(text.slice(end, end + 14));
      if (time) value.time = toTime(time);
      out.push({ start, end, text: m[0], value });
    }
  }
  return out.sort((a, b) => a.start - b.start);
}

function toTime(m: RegExpExecArray): string {
  let hour = Number(m[1]);
  const meridiem = (m[4] ?? '').toLowerCase();
  if (meridiem === 'p' && hour < 12) hour += 12;
  if (meridiem === 'a' && hour === 12) hour = 0;
  return `${String(hour).padStart(2, '0')}:${m[2] ?? '00'}:${m[3] ?? '00'}`;
}

/** A time of day in `text` (`14:05`, `2:05 PM`), as `HH:MM:SS`. */
export function findTime(text: string): PatternMatch<string> | undefined {
  const m = TIME_RE.exec(text);
  return m ? { start: m.index, end: m.index + m[0].length, text: m[0], value: toTime(m) } : undefined;
}

/** `YYYY-MM-DD` of a parsed date. */
export const isoDate = (d: ParsedDate): string =>
  `${String(d.year).padStart(4, '0')}-${String(d.month).padStart(2, '0')}-${String(d.day).padStart(2, '0')}`;

export interface Amount {
  value: number;
  /** Currency symbol or code printed next to the number, if any. */
  currency?: string;
}

const AMOUNT_RE =
  /(-\s?)?(?:(RM|MYR|USD|EUR|GBP|SGD|AUD|INR|\$|€|£|¥|₹)\s?)?(-)?(\d{1,3}(?:,\d{3})+|\d+)([.,])(\d{2})(?!\d|[.,]\d)|(-\s?)?(RM|MYR|USD|EUR|GBP|SGD|AUD|INR|\$|€|£|¥|₹)\s?(\d{1,3}(?:,\d{3})+|\d+)(?![\d.,])/g;

/**
 * Money amounts in `text`: a number with two decimals (`1,234.50`, `50,00` read as 50.00), or a whole number
 * written with a currency (`RM 12`). The printed text keeps a currency symbol only when it touches the number.
 */
export function findAmounts(text: string): PatternMatch<Amount>[] {
  const out: PatternMatch<Amount>[] = [];
  for (const m of text.matchAll(AMOUNT_RE)) {
    const whole = m[4] ?? m[9] ?? '';
    const decimals = m[6] ?? '';
    if (m[4] !== undefined && m[5] === ',' && whole.includes(',')) continue;
    const before = text[m.index - 1] ?? ' ';
    if (/[\d.]/.test(before) || (/[,/]/.test(before) && /\d/.test(text[m.index - 2] ?? ''))) continue;
    const negative = Boolean(m[1] ?? m[3] ?? m[7]);
    const value = Number(`${whole.replace(/,/g, '')}.${decimals || '0'}`) * (negative ? -1 : 1);
    const currency = m[2] ?? m[8];
    let start = m.index;
    const digitsAt = m[0].search(/\d/);
    if (!currency || /\s/.test(m[0].slice(0, digitsAt).replace(/^-/, ''))) start = m.index + digitsAt;
    if (negative && text[start - 1] === '-') start -= 1;
    const printed = text.slice(start, m.index + m[0].length).replace(/,(\d{2})$/, '.$1');
    const amount: Amount = { value: Math.round(value * 100) / 100 };
    if (currency) amount.currency = currency;
    out.push({ start, end: m.index + m[0].length, text: printed, value: amount });
  }
  return out;
}

/**
 * Parses a number as printed (`1,234.50`, `1.234,50`, `(12.00)`, `12-`), or undefined when `text` holds none.
 */
export function parseNumber(text: string): number | undefined {
  const m = /-?\(?\d[\d,. ]*\d|-?\d/.exec(text.replace(/(\d)\s+(?=\d{3}\b)/g, '$1'));
  if (!m) return undefined;
  let s = m[0].replace(/[ (]/g, '');
  const lastComma = s.lastIndexOf(',');
  const lastDot = s.lastIndexOf('.');
  if (lastComma > lastDot && s.length - lastComma === 3) s = s.replace(/\./g, '').replace(',', '.');
  else s = s.replace(/,/g, '');
  const value = Number(s);
  if (!Number.isFinite(value)) return undefined;
  return /\(\s*\d/.test(text) || /\d-$/.test(text.trim()) ? -Math.abs(value) : value;
}

const PHONE_RE = /(?<![\w])(\+?\(?\d{1,4}\)?[\s-]?\d[\d\s-]{5,}\d)(?!\d)/g;

/** Phone-number-like runs of 7 to 15 digits (spaces, dashes, a leading `+` and brackets allowed). */
export function findPhones(text: string): PatternMatch<string>[] {
  const out: PatternMatch<string>[] = [];
  const dates = findDates(text);
  for (const m of text.matchAll(PHONE_RE)) {
    const printed = (m[1] ?? '').trim();
    if (dates.some((d) => d.start < m.index + printed.length && d.end > m.index)) continue;
    const digits = printed.replace(/\D/g, '');
    if (digits.length < 7 || digits.length > 15) continue;
    out.push({ start: m.index, end: m.index + printed.length, text: printed, value: printed });
  }
  return out;
}

const EMAIL_RE = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/g;
const URL_RE =
  /\b(?:https?:\/\/|www\.)[^\s,;]+|\b[a-z0-9-]+\.(?:com|net|org|io|co|biz|info)(?:\.[a-z]{2})?(?:\/\S*)?\b/gi;

const simple = (re: RegExp, text: string): PatternMatch<string>[] =>
  [...text.matchAll(re)].map((m) => ({ start: m.index, end: m.index + m[0].length, text: m[0], value: m[0] }));

/** E-mail addresses in `text`. */
export const findEmails = (text: string): PatternMatch<string>[] => simple(EMAIL_RE, text);

/** URLs and bare domain names in `text` (not e-mail domains). */
export const findUrls = (text: string): PatternMatch<string>[] =>
  simple(URL_RE, text).filter((m) => text[m.start - 1] !== '@');

/** A postcode: 4 to 6 digits standing alone, not part of a date, amount, phone or longer number. */
export const POSTCODE_RE = /(?<![\d./:-]|\d,)\d{5}(?![\d/:-]|[.,]\d|\s?-\s?\d)|\b[A-Z]{1,2}\d[A-Z\d]? \d[A-Z]{2}\b/;

const ID_RE = /[A-Z0-9#][A-Z0-9/_.#-]*\d[A-Z0-9/_.-]*/i;

/** The first identifier-looking token (letters and digits, at least one digit) in `text`. */
export function findIdentifier(text: string): PatternMatch<string> | undefined {
  const m = ID_RE.exec(text);
  if (!m) return undefined;
  const printed = m[0].replace(/[.]+$/, '');
  return { start: m.index, end: m.index + printed.length, text: printed, value: printed };
}
