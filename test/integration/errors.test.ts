/**
 * Error shapes and request ids over HTTP: every response carries `x-request-id`; errors use the spec's three
 * body shapes; a 500 names the request id and nothing internal.
 */
import fs from 'node:fs';
import path from 'node:path';
import { call, startTestApp, uploadFile, type TestApp } from '../helpers/test-app';

describe('errors and request ids', () => {
  let app: TestApp;
  let key: string;

  beforeAll(async () => {
    app = await startTestApp({ PRISM_MAX_JSON_BYTES: '2048' });
    key = await app.createKey('acme');
  });
  afterAll(() => app.close());

  it('mints a request id when none is sent and echoes one that is', async () => {
    const minted = await call(`${app.url}/v1/health`);
    expect(minted.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    const echoed = await call(`${app.url}/v1/health`, { headers: { 'x-request-id': 'client-abc-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('client-abc-123');
    const unsafe = await call(`${app.url}/v1/health`, { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(unsafe.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('puts request ids on error responses too', async () => {
    for (const res of [
      await call(`${app.url}/v1/files`, { key: 'prism_bad' }),
      await call(`${app.url}/v1/files?limit=0`, { key }),
      await call(`${app.url}/v1/nowhere`, { key }),
    ]) {
      expect(res.headers.get('x-request-id')).toBeTruthy();
    }
  });

  it('wraps ordinary errors as {detail:{error:{message,type,code,param}}}', async () => {
    const res = await call(`${app.url}/v1/nowhere`, { key, headers: { 'x-request-id': 'rid-404' } });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      detail: {
        error: {
          message: 'No route for GET /v1/nowhere',
          type: 'not_found_error',
          code: 'route_not_found',
          param: null,
          request_id: 'rid-404',
        },
      },
    });
  });

  it('reports a malformed JSON body as 422 json_invalid', async () => {
    const res = await call(`${app.url}/v1/files/presigned-url`, {
      key,
      body: '{"filename": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { detail: { type: string; loc: unknown[] }[] };
    expect(body.detail[0]).toMatchObject({ type: 'json_invalid', loc: ['body', 0] });
  });

  it('reports a body that is not an object as 422', async () => {
    const res = await call(`${app.url}/v1/files/presigned-url`, { key, json: ['not', 'an', 'object'] });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { detail: { type: string; loc: unknown[] }[] };
    expect(body.detail[0]).toMatchObject({ type: 'model_attributes_type', loc: ['body'] });
  });

  it('rejects a JSON body over the limit with 413', async () => {
    const res = await call(`${app.url}/v1/files/presigned-url`, { key, json: { filename: 'x'.repeat(4096) } });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({
      detail: {
        error: {
          type: 'invalid_request_error',
          code: 'payload_too_large',
          message: expect.stringContaining('2 KiB') as unknown,
        },
      },
    });
  });

  it('renders an unexpected failure as a top-level 500 with the request id and no internals', async () => {
    const tmp = path.join(app.dataDir, 'blobs', 'tmp');
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(tmp), { recursive: true });
    fs.writeFileSync(tmp, 'not a folder');
    try {
      const res = await uploadFile(app.url, key, 'bytes', { filename: 'boom.txt' });
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({
        error: {
          message: 'The server had an internal error while processing the request.',
          type: 'internal_server_error',
          code: 'internal_error',
          param: null,
          request_id: res.headers.get('x-request-id'),
        },
      });
      expect(text).not.toContain(app.dataDir);
      expect(text).not.toMatch(/at .+\.ts/);
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  });
});

describe('hub info', () => {
  it('is open and carries the interface version, but refuses an unknown key', async () => {
    const app = await startTestApp();
    try {
      const res = await call(`${app.url}/v1/hub/info`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ version: '2026-05-19.0' });
      expect((await call(`${app.url}/v1/hub/info`, { key: 'prism_invalid' })).status).toBe(401);
    } finally {
      await app.close();
    }
  });
});
