/**
 * LimitedStdioTransport on in-memory streams: a message over the limit, arriving in chunks, is answered with an
 * error carrying its id (read from its last bytes, where the SDK clients write it, or its first) and the next
 * message is delivered; a non-JSON line gets -32700.
 */
import { PassThrough } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { idOf, LimitedStdioTransport } from '../../../src/mcp/mcp-stdio-transport';

function pair(limit: number) {
  const input = new PassThrough();
  const output = new PassThrough();
  const written: Record<string, unknown>[] = [];
  output.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
      written.push(JSON.parse(line) as Record<string, unknown>);
    }
  });
  const received: JSONRPCMessage[] = [];
  const transport = new LimitedStdioTransport(input, output, limit);
  transport.onmessage = (m) => received.push(m);
  return { input, written, received, transport };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('LimitedStdioTransport', () => {
  it('refuses an oversized message with its id and delivers the next one', async () => {
    const { input, written, received, transport } = pair(1000);
    await transport.start();
    const big = JSON.stringify({
      method: 'tools/call',
      params: { arguments: { data: 'x'.repeat(5000) } },
      jsonrpc: '2.0',
      id: 41,
    });
    for (let i = 0; i < big.length; i += 700) input.write(big.slice(i, i + 700));
    input.write('\n{"jsonrpc":"2.0","id":42,"method":"ping"}\n');
    await tick();
    expect(written).toEqual([
      {
        jsonrpc: '2.0',
        id: 41,
        error: { code: -32600, message: expect.stringMatching(/over the 1000-byte limit/) as unknown },
      },
    ]);
    expect(received).toEqual([{ jsonrpc: '2.0', id: 42, method: 'ping' }]);
  });

  it('answers a line that is not JSON with -32700 and id null', async () => {
    const { input, written, transport } = pair(1000);
    await transport.start();
    input.write('not json\n');
    await tick();
    expect(written).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.any(String) as unknown } },
    ]);
  });

  it('reads the top-level id from the end or the start of a message, never a nested one', () => {
    expect(idOf('{"method":"x","params":{"id":1', '"jsonrpc":"2.0","id":"a\\"b"}')).toBe('a"b');
    expect(idOf('{"jsonrpc":"2.0","id":7,"method":"x","params":{"data":"', 'aaaa"}}}')).toBe(7);
    expect(idOf('{"method":"x","params":{"id":1', 'aaaa"}}}')).toBeNull();
  });
});
