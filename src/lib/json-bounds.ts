/**
 * Bounds on JSON the server did not write: how deep a body may nest, and how much of a caller's input an error
 * may echo back.
 *
 * Every recursive walk in the process (JSON.stringify, zod, schema compilers, our own tree walks) uses the call
 * stack, so a body nested a few thousand levels deep would overflow it — and a RangeError thrown while an error is
 * being rendered takes the process down. The depth is therefore checked on the raw text, before anything parses
 * or walks it, with a loop that uses no recursion itself.
 */

/** The deepest nesting a request body may have by default; real payloads (schemas included) stay far below. */
export const DEFAULT_MAX_JSON_DEPTH = 64;

/**
 * True when the JSON text nests arrays/objects deeper than `maxDepth`. Brackets inside strings do not count.
 * Works on malformed text too (it only counts), so it can run before JSON.parse.
 */
export function jsonTextTooDeep(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) {
        i += 1;
      } // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth += 1;
      if (depth > maxDepth) return true;
    } else if (c === 0x5d || c === 0x7d) depth -= 1;
  }
  return false;
}

/**
 * {@link jsonTextTooDeep} on UTF-8 bytes, without decoding them: brackets, quotes and backslashes are ASCII, and no
 * byte of a multi-byte UTF-8 sequence is.
 */
export function jsonBytesTooDeep(bytes: Uint8Array, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (inString) {
      if (c === 0x5c) i += 1;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth += 1;
      if (depth > maxDepth) return true;
    } else if (c === 0x5d || c === 0x7d) depth -= 1;
  }
  return false;
}

/** True when an already-built value nests deeper than `maxDepth` (iterative: safe on any depth, cycles included). */
export function valueTooDeep(value: unknown, maxDepth: number): boolean {
  const stack: { node: unknown; depth: number }[] = [{ node: value, depth: 0 }];
  let visited = 0;
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth + 1 > maxDepth) return true;
    if (++visited > 1_000_000) return true;
    const children = Array.isArray(node) ? node : Object.values(node as Record<string, unknown>);
    for (const child of children) {
      if (child !== null && typeof child === 'object') stack.push({ node: child, depth: depth + 1 });
    }
  }
  return false;
}

export interface EchoBounds {
  maxDepth: number;
  maxStringChars: number;
  maxItems: number;
  /** Rough budget of characters for the whole echo; once spent, the rest is elided. */
  maxChars: number;
}

export const DEFAULT_ECHO_BOUNDS: EchoBounds = { maxDepth: 6, maxStringChars: 256, maxItems: 20, maxChars: 4096 };

/**
 * A copy of `value` small enough to echo in an error: strings cut to `maxStringChars` (with `…`), arrays and
 * objects to `maxItems` entries, nesting below `maxDepth` replaced by `"…"`. Never throws, whatever the input.
 */
export function clipForEcho(value: unknown, bounds: EchoBounds = DEFAULT_ECHO_BOUNDS): unknown {
  let budget = bounds.maxChars;
  const clip = (node: unknown, depth: number): unknown => {
    if (budget <= 0) return '…';
    if (typeof node === 'string') {
      const cut = node.length > bounds.maxStringChars ? `${node.slice(0, bounds.maxStringChars)}…` : node;
      budget -= cut.length + 2;
      return cut;
    }
    if (node === null || typeof node !== 'object') {
      budget -= 8;
      return typeof node === 'bigint' || typeof node === 'function' || typeof node === 'symbol' ? String(node) : node;
    }
    if (depth >= bounds.maxDepth) {
      budget -= 3;
      return '…';
    }
    if (Array.isArray(node)) {
      const out: unknown[] = [];
      for (let i = 0; i < node.length && i < bounds.maxItems && budget > 0; i++) out.push(clip(node[i], depth + 1));
      if (node.length > out.length) out.push('…');
      return out;
    }
    const out: Record<string, unknown> = {};
    let count = 0;
    for (const key of Object.keys(node)) {
      if (count >= bounds.maxItems || budget <= 0) {
        out['…'] = '…';
        break;
      }
      const shortKey = key.length > bounds.maxStringChars ? `${key.slice(0, bounds.maxStringChars)}…` : key;
      budget -= shortKey.length + 3;
      Object.defineProperty(out, shortKey, {
        value: clip((node as Record<string, unknown>)[key], depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      count += 1;
    }
    return out;
  };
  try {
    return clip(value, 0);
  } catch {
    return '…';
  }
}
