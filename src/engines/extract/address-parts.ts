/**
 * Splits a printed address into the parts structured schemas ask for (street, city, state, postal code, country),
 * each as printed. The postcode is found by pattern; country and state by region words (or a two-letter code right
 * before a ZIP); the city is what remains on the postcode's line; the street is the lines above it (or, on a
 * one-line address, the comma-separated segments before the city). A part that cannot be told apart stays null.
 */
import { POSTCODE_RE } from './value-patterns';
import { COUNTRY_WORDS, STATE_WORDS } from './vocabulary';

export interface AddressParts {
  street?: string;
  city?: string;
  state?: string;
  postal_code?: string;
  country?: string;
}

const trimPunct = (s: string): string => s.replace(/^[\s,.;:-]+|[\s,.;:-]+$/g, '').replace(/\s+/g, ' ');

/** Finds the last of `phrases` in `text` (whole words, any case) and returns its span. */
function lastPhrase(text: string, phrases: readonly string[]): { start: number; end: number } | undefined {
  const upper = text.toUpperCase();
  let best: { start: number; end: number } | undefined;
  for (const p of phrases) {
    for (const m of upper.matchAll(new RegExp(`(?<![A-Z])${p}(?![A-Z])(\\s+DARUL\\s+[A-Z]+)?`, 'g'))) {
      if (!best || m.index > best.start) best = { start: m.index, end: m.index + m[0].length };
    }
  }
  return best;
}

const STATES = STATE_WORDS.filter((w) => !w.startsWith('DARUL'));

/** The parts of an address given as its printed lines. */
export function splitAddress(lines: string[]): AddressParts {
  const parts: AddressParts = {};
  const all = lines.map((l) => l.trim()).filter(Boolean);
  const countryLine = all.findLastIndex((l) => lastPhrase(l, COUNTRY_WORDS));
  const body = [...all];
  if (countryLine >= 0) {
    const line = body[countryLine] ?? '';
    const span = lastPhrase(line, COUNTRY_WORDS);
    if (span) {
      parts.country = line.slice(span.start, span.end);
      body[countryLine] = line.slice(0, span.start);
    }
  }
  const postIndex = body.findLastIndex((l) => POSTCODE_RE.test(l));
  if (postIndex < 0) return parts;
  let line = body[postIndex] ?? '';
  const post = POSTCODE_RE.exec(line);
  if (!post) return parts;
  parts.postal_code = post[0];
  let before = line.slice(0, post.index);
  let after = line.slice(post.index + post[0].length);
  const usState = /,?\s*\b([A-Z]{2})\s*$/.exec(before);
  // A state name closes its segment (`..., SELANGOR`); followed by more words it is part of a city (`JOHOR BAHRU`).
  const closing = lastPhrase(after, STATES);
  const state = closing && /^[\s,.;]*$/.test(after.slice(closing.end)) ? closing : undefined;
  if (state) {
    parts.state = after.slice(state.start, state.end);
    after = after.slice(0, state.start);
  } else if (usState && /^\d{5}/.test(post[0])) {
    parts.state = usState[1] ?? '';
    before = before.slice(0, usState.index);
  } else {
    const next = body[postIndex + 1];
    const s = next ? lastPhrase(next, STATES) : undefined;
    if (next && s && /^[\s,.;]*$/.test(next.slice(s.end))) parts.state = next.slice(s.start, s.end);
  }
  line = trimPunct(after) || trimPunct(before.split(',').pop() ?? '');
  if (line) parts.city = line.split(',')[0]?.trim() ?? line;
  const streetLines = body.slice(0, postIndex).map(trimPunct).filter(Boolean);
  if (!trimPunct(after)) before = before.slice(0, Math.max(0, before.lastIndexOf(',')));
  if (trimPunct(before)) streetLines.push(trimPunct(before));
  if (streetLines.length > 0) parts.street = streetLines.join(', ');
  return parts;
}
