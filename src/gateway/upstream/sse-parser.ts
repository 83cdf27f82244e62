/**
 * Reads Server-Sent Events incrementally, by the WHATWG rules (except that a last event missing its closing blank
 * line is still delivered: some servers end with `data: [DONE]\n`).
 *
 * Upstream servers send comments (`: keep-alive`), CRLF or bare CR line ends, multi-line `data:` and events split
 * across network reads at any byte; a hand-rolled `split('\n\n')` gets one of those wrong sooner or later. Used
 * for upstream streams and, in tests, to read our own.
 */
import { StringDecoder } from 'node:string_decoder';

export interface SseEvent {
  /** The `event:` field, `message` when absent. */
  event: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
  id: string | null;
}

export interface SseParser {
  /** Feed decoded text; returns the events it completed. */
  push(text: string): SseEvent[];
  /** The stream ended: completes a final event not followed by a blank line. */
  end(): SseEvent[];
}

export function createSseParser(): SseParser {
  let started = false;
  let buffer = '';
  let data: string[] = [];
  let event = '';
  let id: string | null = null;
  let afterCr = false;

  const line = (text: string, out: SseEvent[]): void => {
    if (text === '') {
      if (data.length > 0) out.push({ event: event || 'message', data: data.join('\n'), id });
      data = [];
      event = '';
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    else if (field === 'id' && !value.includes('\0')) id = value;
  };

  return {
    push(text) {
      if (text === '') return [];
      if (!started) {
        started = true;
        // One leading byte order mark is ignored (WHATWG).
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      }
      // A CR that ended the previous read may be the first half of a CRLF split across reads.
      if (afterCr && text.startsWith('\n')) text = text.slice(1);
      afterCr = false;
      buffer += text;
      const out: SseEvent[] = [];
      let start = 0;
      for (let i = 0; i < buffer.length; i += 1) {
        const c = buffer.charCodeAt(i);
        if (c !== 10 && c !== 13) continue;
        line(buffer.slice(start, i), out);
        if (c === 13 && i === buffer.length - 1) afterCr = true;
        else if (c === 13 && buffer.charCodeAt(i + 1) === 10) i += 1;
        start = i + 1;
      }
      buffer = buffer.slice(start);
      return out;
    },
    end() {
      const out: SseEvent[] = [];
      if (buffer !== '') line(buffer, out);
      buffer = '';
      line('', out);
      return out;
    },
  };
}

/**
 * Parse a stream into events, one array per piece of the stream that completed at least one (so per network read):
 * a consumer that handles a read's events together pays for one async step, not one per event. Bytes (a fetch
 * body, a node stream without an encoding) are decoded as UTF-8 here, text (a node stream after
 * `setEncoding('utf8')`, whose decoder keeps characters split across reads whole) is taken as is.
 */
export async function* readSseEventBatches(
  body: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
): AsyncGenerator<SseEvent[]> {
  let decoder: StringDecoder | undefined;
  const parser = createSseParser();
  for await (const chunk of body) {
    const text = typeof chunk === 'string' ? chunk : (decoder ??= new StringDecoder('utf8')).write(chunk);
    const events = parser.push(text);
    if (events.length > 0) yield events;
  }
  const last = decoder === undefined ? parser.end() : [...parser.push(decoder.end()), ...parser.end()];
  if (last.length > 0) yield last;
}

/** The events of a stream one at a time (see `readSseEventBatches`). */
export async function* readSseEvents(
  body: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
): AsyncGenerator<SseEvent> {
  for await (const events of readSseEventBatches(body)) yield* events;
}
