/**
 * The upstream metrics decorator: it times a stream's first body bytes when the transport says they arrived, and
 * leaves the stream object as the transport made it (an own `push` on each Readable kept every streamed call's
 * objects alive into V8's old generation, see measured-transport.ts).
 */
import { Readable } from 'node:stream';
import type { Transport, UpstreamRequest } from '../../../src/gateway/upstream/http-transport';
import { measuredTransport } from '../../../src/gateway/upstream/measured-transport';

function recorder() {
  const calls: { host: string; status: string }[] = [];
  const firstBytes: string[] = [];
  return {
    calls,
    firstBytes,
    timings: {
      observeCall: (host: string, status: string) => calls.push({ host, status }),
      observeFirstByte: (host: string) => firstBytes.push(host),
    },
  };
}

const url = new URL('http://upstream.test:8080/v1/chat/completions');
const init: UpstreamRequest = { method: 'POST', headers: {}, body: '{}' };

describe('measuredTransport', () => {
  it('observes the first stream bytes through the transport hook, once, and the call when the stream closes', async () => {
    const seen = recorder();
    let hook: (() => void) | undefined;
    const stream = new Readable({ read: () => undefined });
    const transport: Transport = (_url, request) => {
      hook = request.onFirstStreamBytes;
      return Promise.resolve({ status: 200, headers: {}, stream });
    };
    const response = await measuredTransport(transport, seen.timings)(url, init);

    expect(response.stream).toBe(stream);
    expect(Object.hasOwn(stream, 'push')).toBe(false);
    expect(init.onFirstStreamBytes).toBeUndefined(); // the caller's request object is not modified
    expect(seen.firstBytes).toEqual([]);
    hook?.();
    expect(seen.firstBytes).toEqual(['upstream.test:8080']);

    stream.destroy();
    await new Promise((resolve) => stream.once('close', resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen.calls).toEqual([{ host: 'upstream.test:8080', status: '200' }]);
  });

  it('observes a whole reply at once and a failure before any status as `error`', async () => {
    const seen = recorder();
    const reply: Transport = () => Promise.resolve({ status: 429, headers: {}, body: Buffer.from('{}') });
    await measuredTransport(reply, seen.timings)(url, init);
    const failing: Transport = () => Promise.reject(new Error('connect ECONNREFUSED'));
    await expect(measuredTransport(failing, seen.timings)(url, init)).rejects.toThrow('ECONNREFUSED');

    expect(seen.calls).toEqual([
      { host: 'upstream.test:8080', status: '429' },
      { host: 'upstream.test:8080', status: 'error' },
    ]);
    expect(seen.firstBytes).toEqual([]);
  });
});
