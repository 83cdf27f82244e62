/**
 * Authentication over HTTP: the anonymous forms, invalid and revoked keys, single-user mode, and 503 when keys
 * cannot be looked up.
 */
import { call, startTestApp, uploadFile, type TestApp } from '../helpers/test-app';
import { rawSql } from '../helpers/raw-sql';

describe('authentication', () => {
  let app: TestApp;
  let key: string;

  beforeAll(async () => {
    app = await startTestApp();
    key = await app.createKey('acme');
  });
  afterAll(() => app.close());

  it.each([
    ['no header', undefined],
    ['an empty bearer', 'Bearer '],
    ['the sentinel', 'Bearer prism'],
  ])('treats %s as anonymous on the gateway', async (_label, header) => {
    const headers: Record<string, string> = header === undefined ? {} : { authorization: header };
    const health = await call(`${app.url}/v1/compat/health`, { headers });
    expect(health.status).toBe(200);
    const files = await call(`${app.url}/v1/compat/files`, { headers });
    expect(files.status).toBe(200);
    expect(await files.json()).toMatchObject({ object: 'list', data: expect.any(Array) as unknown });
  });

  it('asks anonymous callers of the main API for a key', async () => {
    const res = await call(`${app.url}/v1/files`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({
      detail: { error: { type: 'authentication_error', code: 'missing_api_key' } },
    });
  });

  it.each(['/v1/files', '/v1/health'])(
    'rejects an unknown key on %s with 401 "Invalid API Key", never as anonymous',
    async (route) => {
      const res = await call(`${app.url}${route}`, { key: 'prism_not_a_real_key' });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ detail: 'Invalid API Key' });
    },
  );

  it.each(['/v1/compat/files', '/v1/openai/files'])(
    'rejects an unknown key on %s with 401, the plain detail beside the error object OpenAI clients read',
    async (route) => {
      const res = await call(`${app.url}${route}`, { key: 'prism_not_a_real_key' });
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
    },
  );

  // Every route a guest may call: open to no key, closed to a key that matches nothing (Authentication rule 4).
  const chat = { model: 'prism-orion-1', messages: [{ role: 'user', content: 'hi' }] };
  const embed = { model: 'prism-embed-text-1', input: 'hello' };
  it.each([
    ['GET', '/v1/hub/info', undefined],
    ['GET', '/v1/hub/domains', undefined],
    ['POST', '/v1/hub/schema', { domain: 'document.invoice' }],
    ['GET', '/v1/domains', undefined],
    ['POST', '/v1/schema', { domain: 'document.invoice' }],
    ['GET', '/v1/models', undefined],
    ['GET', '/v1/compat/health', undefined],
    ['GET', '/v1/openai/health', undefined],
    ['GET', '/v1/compat/models', undefined],
    ['GET', '/v1/openai/models/prism-1', undefined],
    ['GET', '/v1/compat/files', undefined],
    ['POST', '/v1/compat/chat/completions', chat],
    ['POST', '/v1/openai/chat/completions', chat],
    ['POST', '/v1/compat/embeddings', embed],
  ])('answers %s %s anonymously, and 401 to an unknown key', async (method, route, json) => {
    const anonymous = await call(`${app.url}${route}`, { method, json });
    expect(anonymous.status).toBeLessThan(300);
    const wrongKey = await call(`${app.url}${route}`, { method, json, key: 'prism_not_a_real_key' });
    expect(wrongKey.status).toBe(401);
    expect(await wrongKey.json()).toMatchObject({ detail: 'Invalid API Key' });
  });

  it('rejects a non-bearer credential', async () => {
    const res = await call(`${app.url}/v1/compat/files`, { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    expect(res.status).toBe(401);
  });

  it('accepts a valid key and rejects it once revoked', async () => {
    const created = await app.container.services.accounts.createKey({ org: 'revocable' });
    expect((await call(`${app.url}/v1/files`, { key: created.key })).status).toBe(200);
    await app.container.services.accounts.revokeKey(created.keyId);
    const res = await call(`${app.url}/v1/files`, { key: created.key });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ detail: 'Invalid API Key' });
  });

  it('keeps guests apart from organisations', async () => {
    const guestUpload = await uploadFile(app.url, undefined, 'guest bytes', { prefix: '/v1/compat/files' });
    expect(guestUpload.status).toBe(201);
    const { id } = (await guestUpload.json()) as { id: string };
    expect((await call(`${app.url}/v1/files/${id}`, { key })).status).toBe(404);
    expect((await call(`${app.url}/v1/compat/files/${id}`)).status).toBe(200);
  });
});

describe('single-user mode', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ PRISM_SINGLE_USER: '1' });
  });
  afterAll(() => app.close());

  it('acts as the owner on the main API without a key', async () => {
    const created = await uploadFile(app.url, undefined, 'owner bytes');
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const withOwnerKey = await call(`${app.url}/v1/files/${id}`, { key: app.ownerKey });
    expect(withOwnerKey.status).toBe(200);
    expect((await call(`${app.url}/v1/files/${id}`, { method: 'DELETE' })).status).toBe(200);
  });

  it('keeps the gateway anonymous and still rejects bad keys', async () => {
    const created = (await (await uploadFile(app.url, undefined, 'owner again')).json()) as { id: string };
    expect((await call(`${app.url}/v1/compat/files/${created.id}`)).status).toBe(404);
    expect((await call(`${app.url}/v1/files`, { key: 'prism_wrong' })).status).toBe(401);
  });
});

describe('key lookup failure', () => {
  it('answers 503 with Retry-After when the key store is down, and never falls back to anonymous', async () => {
    const app = await startTestApp();
    try {
      await rawSql(app.container).breakConnection();
      const res = await call(`${app.url}/v1/files`, { key: app.ownerKey });
      expect(res.status).toBe(503);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(res.headers.get('www-authenticate')).toBeNull();
      expect(await res.json()).toMatchObject({ detail: { error: { code: 'auth_unavailable' } } });
      // Without a key nothing needs looking up, so the open health check still answers.
      expect((await call(`${app.url}/v1/compat/health`)).status).toBe(200);
      expect((await call(`${app.url}/v1/compat/health`, { key: app.ownerKey })).status).toBe(503);
    } finally {
      await app.close();
    }
  });
});
