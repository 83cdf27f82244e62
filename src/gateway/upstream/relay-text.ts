/**
 * What the gateway reads from, and changes in, an upstream chunk it relays as text (RawJson) instead of parsing:
 * the model name it relabels, whether the chunk carries usage (the only chunk billing needs whole), the length of
 * the text it carries (billing's fallback when no usage comes), and the `"usage":null` an upstream adds to every
 * chunk once usage was asked for.
 *
 * Each reads the JSON text structurally, not by a loose substring: inside a JSON string every `"` is escaped, so
 * a `"key"` followed by `:` (after optional white space) is always an object key and never part of a value. A key
 * of the same name nested deeper than the top level would also match; chunks of the chat completion shape have
 * none for `model` and `usage`, and `content` is counted wherever it holds a string, as the parsed path counted
 * every choice's delta content.
 */

/** Index of the first character after `"key"`, optional white space and `:`, or -1. */
function valueStart(text: string, key: string, from = 0): number {
  const quoted = `"${key}"`;
  for (let at = text.indexOf(quoted, from); at !== -1; at = text.indexOf(quoted, at + quoted.length)) {
    let i = at + quoted.length;
    while (isSpace(text.charCodeAt(i))) i += 1;
    if (text.charCodeAt(i) !== 58 /* : */) continue;
    i += 1;
    while (isSpace(text.charCodeAt(i))) i += 1;
    return i;
  }
  return -1;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

/** Index just past the JSON string literal that opens at `start` (a `"`), or -1 when it does not close. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 92 /* \ */) i += 1;
    else if (c === 34 /* " */) return i + 1;
  }
  return -1;
}

/**
 * The text with the top-level `model` value replaced by `model` (a JSON string literal, e.g. from
 * JSON.stringify), or null when it has no string `model` (the caller then parses the chunk).
 */
export function relabelModel(text: string, literal: string): string | null {
  const start = valueStart(text, 'model');
  if (start === -1 || text.charCodeAt(start) !== 34) return null;
  const end = stringEnd(text, start);
  if (end === -1) return null;
  return text.slice(0, start) + literal + text.slice(end);
}

/** True when the chunk has a `usage` object (not null): the one chunk of a stream billing reads whole. */
export function carriesUsage(text: string): boolean {
  const start = valueStart(text, 'usage');
  return start !== -1 && text.charCodeAt(start) === 123; /* { */
}

/** The text without a `"usage": null` member (the parsed path deleted it when the caller asked for no usage). */
export function withoutNullUsage(text: string): string {
  const start = valueStart(text, 'usage');
  if (start === -1 || !text.startsWith('null', start)) return text;
  let keyAt = text.lastIndexOf('"usage"', start);
  let end = start + 4;
  // Take the member's comma with it: the one before it, or (when it is the first member) the one after it.
  let before = keyAt - 1;
  while (isSpace(text.charCodeAt(before))) before -= 1;
  if (text.charCodeAt(before) === 44 /* , */) keyAt = before;
  else {
    let after = end;
    while (isSpace(text.charCodeAt(after))) after += 1;
    if (text.charCodeAt(after) === 44) end = after + 1;
  }
  return text.slice(0, keyAt) + text.slice(end);
}

/** Characters of every string `content` value in the chunk, as JSON.parse would give them (an escape is one). */
export function contentChars(text: string): number {
  let total = 0;
  for (let from = 0; ;) {
    const start = valueStart(text, 'content', from);
    if (start === -1) return total;
    from = start;
    if (text.charCodeAt(start) !== 34) continue;
    for (let i = start + 1; i < text.length; i += 1) {
      const c = text.charCodeAt(i);
      if (c === 34) {
        from = i + 1;
        break;
      }
      if (c === 92) i += text.charCodeAt(i + 1) === 117 /* u */ ? 5 : 1;
      // A surrogate pair is two UTF-16 units in JSON.parse's string too; count units, as `.length` did.
      total += 1;
    }
  }
}

/** The chunk's top-level `id` when it is a string, else null. */
export function chunkId(text: string): string | null {
  const start = valueStart(text, 'id');
  if (start === -1 || text.charCodeAt(start) !== 34) return null;
  const end = stringEnd(text, start);
  if (end === -1) return null;
  try {
    return JSON.parse(text.slice(start, end)) as string;
  } catch {
    return null;
  }
}
