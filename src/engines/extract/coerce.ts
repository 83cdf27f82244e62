/**
 * Converts a found value to the type its schema node asks for: numbers parsed from their printed form
 * (`1,234.50` → 1234.5), integers only when the printed number is whole, ISO forms for `format: date` and
 * `date-time`, enum values only when they are members. A value that does not fit becomes null rather than a guess.
 */
import type { FoundValue } from './found-value';
import type { ScalarNode } from './schema-model';
import { findDates, isoDate, parseNumber } from './value-patterns';

function asNumber(found: FoundValue): number | undefined {
  if (typeof found.parsed === 'number') return found.parsed;
  return parseNumber(found.text);
}

function asDate(found: FoundValue, withTime: boolean): string | undefined {
  const parsed = typeof found.parsed === 'string' ? found.parsed : undefined;
  if (parsed && /^\d{4}-\d{2}-\d{2}/.test(parsed)) {
    return withTime || parsed.length === 10 ? parsed : parsed.slice(0, 10);
  }
  const d = findDates(found.text)[0];
  if (!d) return undefined;
  return withTime && d.value.time ? `${isoDate(d.value)}T${d.value.time}` : isoDate(d.value);
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
