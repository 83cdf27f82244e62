/**
 * The URL guard: private, loopback and link-local targets are refused (also behind a redirect), sizes and time
 * are capped, and a configured opt-in lets loopback through (what tests and single-machine setups use).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isPrivateAddress, parsePublicUrl, safeFetch, SafeFetchError } from '../../../src/lib/safe-fetch';

describe('isPrivateAddress', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '0:0:0:0:0:ffff:7f00:0001',
    '::ffff:0:a9fe:a9fe',
    '::7f00:1',
    '::127.0.0.1',
    'fec0::1',
    'not-an-ip',
  ])('refuses %s', (address) => expect(isPrivateAddress(address)).toBe(true));
  it.each(['8.8.8.8', '1.1.1.1', '2606:4700::1111', '::ffff:8.8.8.8', '::ffff:808:808'])('allows %s', (address) =>
    expect(isPrivateAddress(address)).toBe(false),
  );
});

describe('parsePublicUrl', () => {
  it('accepts http(s) and refuses other schemes and credentials', () => {
    expect(parsePublicUrl('https://example.com/a.png').hostname).toBe('example.com');
    for (const bad of [
      'file:///etc/passwd',
      'ftp://example.com/x',
      'gopher://x',
      'http://user:pw@example.com/',
      'nonsense',
    ]) {
      expect(() => parsePublicUrl(bad)).toThrow(SafeFetchError);
    }
  });
});

describe('safeFetch', () => {
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/redirect-private') {
        res.writeHead(302, { location: 'http://127.0.0.1:1/secret' });
        res.end();
      } else if (req.url === '/redirect-loop') {
        res.writeHead(302, { location: '/redirect-loop' });
        res.end();
      } else if (req.url === '/big') {
        res.end(Buffer.alloc(4096));
      } else if (req.url === '/slow') {
        setTimeout(() => res.end('late'), 2000);
      } else {
        res.setHeader('content-type', 'text/plain');
        res.end('hello');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const open = { allowPrivate: true, maxBytes: 1024, timeoutMs: 5000 };

  it('refuses loopback unless private addresses are allowed', async () => {
    await expect(safeFetch(`${base}/ok`, { ...open, allowPrivate: false })).rejects.toMatchObject({
      kind: 'not_allowed',
    });
    await expect(safeFetch('http://localhost:9/x', { ...open, allowPrivate: false })).rejects.toMatchObject({
      kind: 'not_allowed',
    });
    const res = await safeFetch(`${base}/ok`, open);
    expect(res).toMatchObject({ status: 200, contentType: 'text/plain' });
    expect(res.body.toString()).toBe('hello');
  });

  it('caps size, redirects and time', async () => {
    await expect(safeFetch(`${base}/big`, open)).rejects.toMatchObject({ kind: 'too_large' });
    await expect(safeFetch(`${base}/redirect-loop`, { ...open, maxRedirects: 3 })).rejects.toMatchObject({
      kind: 'failed',
      message: 'more than 3 redirects',
    });
    await expect(safeFetch(`${base}/slow`, { ...open, timeoutMs: 200 })).rejects.toMatchObject({ kind: 'timeout' });
  });

  it('follows a redirect only to where the rules allow', async () => {
    // The redirect target is re-resolved and re-checked; with private addresses allowed it is simply unreachable.
    await expect(safeFetch(`${base}/redirect-private`, open)).rejects.toMatchObject({ kind: 'failed' });
    await expect(safeFetch(`${base}/redirect-private`, { ...open, followRedirects: false })).resolves.toMatchObject({
      status: 302,
    });
  });
});
