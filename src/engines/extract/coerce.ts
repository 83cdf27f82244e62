/**
 * Converts a found value to the type its schema node asks for: numbers parsed from their printed form
 * (`1,234.50` → 1234.5), integers only when the printed number is whole, ISO forms for `format: date` and
 * `date-time`, enum values only when they are members. A value that does not fit becomes null rather than a guess.
 * `format: date-time` needs a full RFC 3339 time with an offset: a receipt prints a wall-clock time (or none) and no
 * zone, so the answer is that wall clock written as `Z` (`2018-03-14T13:45:00Z`, `T00:00:00Z` when no time is
 * printed); a caller that knows the shop's zone reads it as local time.
 */
import type { FoundValue } from './found-value';
import type { ScalarNode } from './schema-model';
import { findDates, isoDate, parseNumber } from './value-patterns';

function asNumber(found: FoundValue): number | undefined {
  if (typeof found.parsed === 'number') return found.parsed;
  return parseNumber(found.text);
}

/** `YYYY-MM-DD` plus an optional `HH:MM[:SS]` → an RFC 3339 date-time (seconds filled, offset `Z`). */
export function rfc3339(date: string, time: string | undefined): string {
  const clock = time && /^\d{2}:\d{2}(:\d{2})?/.test(time) ? time.slice(0, 8) : '00:00:00';
  return `${date}T${clock.length === 5 ? `${clock}:00` : clock}Z`;
}

function asDate(found: FoundValue, withTime: boolean): string | undefined {
  const parsed = typeof found.parsed === 'string' ? found.parsed : undefined;
  if (parsed && /^\d{4}-\d{2}-\d{2}/.test(parsed)) {
    if (!withTime) return parsed.slice(0, 10);
    if (/(Z|[+-]\d{2}:\d{2})$/.test(parsed) && parsed.length > 10) return parsed;
    return rfc3339(parsed.slice(0, 10), parsed.length > 11 ? parsed.slice(11) : undefined);
  }
  const d = findDates(found.text)[0];
  if (!d) return undefined;
  return withTime ? rfc3339(isoDate(d.value), d.value.time) : isoDate(d.value);
}

/** The JSON value for `node`, or undefined when `found` cannot honestly be expressed in that type. */
export function coerceValue(node: ScalarNode, found: FoundValue): unknown {
  if (node.enumValues && node.enumValues.length > 0) {
    const candidates = [found.parsed, found.text, asNumber(found)]
      .filter((c): c is string | number | boolean => ['string', 'number', 'boolean'].includes(typeof c))
      .map((c) => String(c).toLowerCase());
    return node.enumValues.find(
      (v) =>
        (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') &&
        candidates.includes(String(v).toLowerCase()),
    );
  }
  switch (node.type) {
    case 'boolean':
      return typeof found.parsed === 'boolean' ? found.parsed : undefined;
    case 'number':
      return asNumber(found);
    case 'integer': {
      const n = asNumber(found);
      return n !== undefined && Number.isInteger(n) ? n : undefined;
    }
    case 'string':
      if (node.format === 'date') return asDate(found, false);
      if (node.format === 'date-time') return asDate(found, true);
      return found.text === '' ? undefined : found.text;
  }
}
