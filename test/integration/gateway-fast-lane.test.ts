/**
 * The gateway fast lane (chat completions served outside express) answers exactly as the express stack does:
 * the same error bodies and headers for bad JSON, oversized bodies and bad keys, request ids and rate-limit
 * headers, client addresses behind a trusted proxy, and everything it does not take (other content types,
 * compressed bodies) still reaches express.
 */
import { gzipSync } from 'node:zlib';
import { call, startTestApp, type TestApp } from '../helpers/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ PRISM_MAX_JSON_BYTES: '2048', PRISM_TRUST_PROXY: 'loopback' });
});
afterAll(() => app.close());

const CHAT = '/v1/compat/chat/completions';
// An express route on the same surface with the same body parser, limits and error responder.
const EXPRESS = '/v1/compat/embeddings';

async function post(path: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const res = await call(`${app.url}${path}`, {
    method: 'POST',
    key: app.ownerKey,
    body,
    headers: { 'content-type': 'application/json', ...headers },
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text.replace(/"request_id":"[^"]*"/g, '"request_id":"…"') };
}

describe('gateway fast lane', () => {
  it('answers bad JSON and oversized bodies exactly as express does', async () => {
    for (const body of ['{"model": ', '"just a string"']) {
      const [fast, slow] = [await post(CHAT, body), await post(EXPRESS, body)];
      expect(fast.status).toBe(422);
      expect([fast.status, fast.body, fast.headers.get('content-type')]).toEqual([
        slow.status,
        slow.body,
        slow.headers.get('content-type'),
      ]);
    }
    const big = JSON.stringify({ model: 'prism-orion-1', messages: [{ role: 'user', content: 'x'.repeat(4096) }] });
    const [fast, slow] = [await post(CHAT, big), await post(EXPRESS, big)];
    expect(fast.status).toBe(413);
    expect(fast.headers.get('connection')).toBe('close');
    expect([fast.status, fast.body]).toEqual([slow.status, slow.body]);
  });

  it('keeps request ids, rate-limit headers and the invalid-key answer', async () => {
    const body = JSON.stringify({ model: 'prism-orion-1', messages: [{ role: 'user', content: 'hello' }] });
    const ok = await post(CHAT, body, { 'x-request-id': 'trace-123' });
    expect(ok.status).toBe(201);
    expect(ok.headers.get('x-request-id')).toBe('trace-123');
    expect(ok.headers.get('x-ratelimit-limit-requests')).toBe('60');
    const minted = await post(CHAT, body, { 'x-request-id': 'not ok!' });
    expect(minted.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);

    const res = await call(`${app.url}${CHAT}`, { key: 'prism_wrong', json: JSON.parse(body) as unknown });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      detail: 'Invalid API Key',
      error: {
        message: 'Invalid API Key',
        type: 'authentication_error',
        code: 'invalid_api_key',
        param: null,
        request_id: res.headers.get('x-request-id'),
      },
    });
  });

  it('leaves other content types and compressed bodies to express, which still serves them', async () => {
    const body = JSON.stringify({ model: 'prism-orion-1', messages: [{ role: 'user', content: 'hello' }] });
    const gzipped = await post(CHAT, gzipSync(body), { 'content-encoding': 'gzip' });
    expect(gzipped.status).toBe(201);
    expect(JSON.parse(gzipped.body)).toMatchObject({ object: 'chat.completion', model: 'prism-orion-1' });
    const text = await post(CHAT, body, { 'content-type': 'text/plain' });
    expect(text.status).toBe(422);
  });

  it('counts anonymous callers by the client address a trusted proxy forwards', async () => {
    const body = JSON.stringify({ model: 'prism-orion-1', messages: [{ role: 'user', content: 'hi' }] });
    const remaining = async (ip: string): Promise<string | null> => {
      const res = await call(`${app.url}${CHAT}`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
      });
      await res.arrayBuffer();
      return res.headers.get('x-ratelimit-remaining-requests');
    };
    expect(await remaining('203.0.113.7')).toBe('59');
    expect(await remaining('203.0.113.7')).toBe('58');
    expect(await remaining('198.51.100.9')).toBe('59');
  });
});
