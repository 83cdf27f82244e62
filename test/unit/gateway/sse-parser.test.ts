import { Readable } from 'node:stream';
import { createSseParser, readSseEventBatches, readSseEvents } from '../../../src/gateway/upstream/sse-parser';

describe('SSE parser', () => {
  it('handles LF, CRLF and CR line ends, comments, multi-line data, event and id fields', () => {
    const parser = createSseParser();
    const events = parser.push(': keep-alive\n\ndata: {"a":1}\r\n\r\nevent: error\rdata: line1\rdata:line2\rid: 7\r\r');
    expect(events).toEqual([
      { event: 'message', data: '{"a":1}', id: null },
      { event: 'error', data: 'line1\nline2', id: '7' },
    ]);
  });

  it('completes events split at any byte, including between CR and LF', () => {
    const text = 'data: first\r\n\r\ndata: second\r\n\r\n';
    for (let cut = 1; cut < text.length; cut += 1) {
      const parser = createSseParser();
      const events = [
        ...parser.push(text.slice(0, cut)),
        ...parser.push(''),
        ...parser.push(text.slice(cut)),
        ...parser.end(),
      ];
      expect(events.map((e) => e.data)).toEqual(['first', 'second']);
    }
  });

  it('delivers a last event that lacks its blank line, and ignores a data-less block', () => {
    const parser = createSseParser();
    expect(parser.push('event: ping\n\ndata: [DONE]')).toEqual([]);
    expect(parser.end()).toEqual([{ event: 'message', data: '[DONE]', id: null }]);
  });

  it('reads a byte stream with multi-byte characters split across reads', async () => {
    const bytes = Buffer.from('data: héllo ✓\n\n');
    async function* body() {
      for (const b of bytes) yield Uint8Array.of(b);
    }
    const events = [];
    for await (const e of readSseEvents(body())) events.push(e.data);
    expect(events).toEqual(['héllo ✓']);
  });

  it('reads a node stream, as text after setEncoding or as bytes, with a character split across reads', async () => {
    const bytes = Buffer.from('data: ✓😀\n\ndata: [DONE]\n\n');
    const pieces = [bytes.subarray(0, 8), bytes.subarray(8, 11), bytes.subarray(11)];
    const read = async (source: AsyncIterable<Uint8Array | string>) => {
      const out: string[] = [];
      for await (const e of readSseEvents(source)) out.push(e.data);
      return out;
    };
    expect(await read(Readable.from(pieces, { objectMode: false }).setEncoding('utf8'))).toEqual(['✓😀', '[DONE]']);
    expect(await read(Readable.from(pieces, { objectMode: false }))).toEqual(['✓😀', '[DONE]']);
  });

  it('reads text chunks and plain arrays, and ignores one leading byte order mark', async () => {
    const out: string[] = [];
    for await (const e of readSseEvents(['\uFEFFdata: a\n', '\ndata: \uFEFFb\n\n'])) out.push(e.data);
    expect(out).toEqual(['a', '\uFEFFb']);
    const bytes: string[] = [];
    for await (const e of readSseEvents([Buffer.from('\uFEFFdata: c\n\n')])) bytes.push(e.data);
    expect(bytes).toEqual(['c']);
  });

  it('reads events in batches, one per piece of the stream that completed any, the unterminated last one at the end', async () => {
    const batches: string[][] = [];
    for await (const batch of readSseEventBatches(['data: a\n\ndata: b\n\ndata: c', '\n', '\ndata: d'])) {
      batches.push(batch.map((e) => e.data));
    }
    expect(batches).toEqual([['a', 'b'], ['c'], ['d']]);
  });
});
