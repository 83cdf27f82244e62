/**
 * Issue 18's defects, each sent as the reproducing bytes to the running app, then a health check on the same server:
 * deep JSON (fast lane and express), truncated and malformed multipart, corrupt compressed bodies, error bodies
 * without stack or path, stored XSS through file links, aborted uploads, UTF-8 filenames, pdfjs's global patches,
 * ffconcat lists past the media text check, the guest upload quota, and auth before validation.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import { makeTextPdf } from '../helpers/media-fixtures';
import { call, ON_SQLITE, startTestApp, uploadFile, type TestApp } from '../helpers/test-app';

const deep = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);
const deepObject = (levels: number): string => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

/** A JSON error body: no HTML, no stack frame, no absolute path. */
async function expectCleanJson(res: Response): Promise<Record<string, unknown>> {
  const text = await res.text();
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(text).not.toMatch(/<html|\n\s+at |node_modules|\/work\/|\/tmp\/|\.ts:\d+|RangeError/i);
  return JSON.parse(text) as Record<string, unknown>;
}

describe('hardening', () => {
  let app: TestApp;
  let key: string;
  const tmpArea = (): string[] => {
    const dir = path.join(app.dataDir, 'blobs', 'tmp');
    return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
  };
  const expectHealthy = async (): Promise<void> => {
    const res = await call(`${app.url}/v1/compat/health`);
    expect(res.status).toBe(200);
  };

  beforeAll(async () => {
    app = await startTestApp({ PRISM_GUEST_UPLOADS_PER_DAY: '1000' });
    key = await app.createKey('hardening', 'pro');
    await app.container.services.accounts.addCredits('hardening', 5);
  });
  afterAll(() => app.close());

  describe('1/3: deeply nested JSON', () => {
    it.each(['/v1/compat/chat/completions', '/v1/openai/chat/completions'])(
      'answers %s (fast lane, no key) with a short 422 at depth 5000 and 4000',
      async (route) => {
        for (const levels of [5000, 4000]) {
          const res = await call(`${app.url}${route}`, {
            body: deep(levels),
            headers: { 'content-type': 'application/json' },
          });
          expect(res.status).toBe(422);
          const body = await expectCleanJson(res);
          expect(JSON.stringify(body).length).toBeLessThan(2048);
          expect(body).toMatchObject({ detail: [{ type: 'json_invalid', ctx: { error: 'JSON nested too deeply' } }] });
          await expectHealthy();
        }
      },
    );

    it.each([
      ['/v1/image/generate', true],
      ['/v1/compat/embeddings', false],
      ['/v1/hub/schema', false],
      ['/v1/files/presigned-url', true],
      ['/v1/feedback/submit', true],
    ])('answers %s with a JSON 4xx, never an HTML 500', async (route, needsKey) => {
      const res = await call(`${app.url}${route}`, {
        key,
        body: deep(5000),
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(422);
      await expectCleanJson(res);
      if (needsKey) {
        const keyless = await call(`${app.url}${route}`, {
          body: deep(5000),
          headers: { 'content-type': 'application/json' },
        });
        expect(keyless.status).toBe(401); // authenticated before the body is looked at
        await expectCleanJson(keyless);
      }
      await expectHealthy();
    });

    it('bounds depth inside otherwise valid bodies (metadata, JSON schemas)', async () => {
      const metadata = `{"images":["data:image/png;base64,AAAA"],"domain":"document.invoice","metadata":${deepObject(500)}}`;
      const schema = `{"images":["data:image/png;base64,AAAA"],"config":{"json_schema":${deepObject(500)}}}`;
      for (const body of [metadata, schema]) {
        const res = await call(`${app.url}/v1/image/generate`, {
          key,
          body,
          headers: { 'content-type': 'application/json' },
        });
        expect(res.status).toBe(422);
        expect(JSON.stringify(await expectCleanJson(res))).not.toMatch(/Maximum call stack/);
      }
      await expectHealthy();
    });

    it('cuts the echoed input of a 422 short', async () => {
      const huge = { images: { a: 'x'.repeat(300_000), b: Array.from({ length: 5000 }, (_, i) => i) } };
      const res = await call(`${app.url}/v1/image/generate`, { key, json: huge });
      expect(res.status).toBe(422);
      const text = JSON.stringify(await expectCleanJson(res));
      expect(text.length).toBeLessThan(16_384);
      await expectHealthy();
    });
  });

  describe('2: multipart and body encodings', () => {
    const truncated = '--zzz\r\nContent-Disposition: form-data; name="file"; filename="a.jpg"\r\n\r\nhello';
    it.each([
      ['/v1/compat/files', false],
      ['/v1/files', true],
    ])('answers a truncated upload to %s with 400 and leaves no temp file', async (route, withKey) => {
      const res = await call(`${app.url}${route}`, {
        ...(withKey ? { key } : {}),
        body: truncated,
        headers: { 'content-type': 'multipart/form-data; boundary=zzz' },
      });
      expect(res.status).toBe(400);
      expect(await expectCleanJson(res)).toMatchObject({ detail: { error: { code: 'malformed_multipart' } } });
      await expectHealthy();
      expect(tmpArea()).toEqual([]);
    });

    it('answers a malformed part header, a wrong boundary and no boundary with 400', async () => {
      const cases: [string, string][] = [
        ['multipart/form-data; boundary=zzz', '--zzz\r\nthis is not a header\r\n\r\nx\r\n--zzz--\r\n'],
        ['multipart/form-data; boundary=zzz', '--yyy\r\nContent-Disposition: form-data; name="file"\r\n\r\nx'],
        ['multipart/form-data', '--zzz\r\n\r\n'],
      ];
      for (const [type, body] of cases) {
        const res = await call(`${app.url}/v1/files`, { key, body, headers: { 'content-type': type } });
        expect(res.status).toBe(400);
        await expectCleanJson(res);
      }
      await expectHealthy();
      expect(tmpArea()).toEqual([]);
    });

    it.each(['gzip', 'br', 'deflate'])('answers a corrupt %s JSON body with 400', async (encoding) => {
      const res = await call(`${app.url}/v1/files/presigned-url`, {
        key,
        body: Buffer.from('this is not compressed at all'),
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
      });
      expect(res.status).toBe(400);
      expect(await expectCleanJson(res)).toMatchObject({ detail: { error: { code: 'malformed_body' } } });
      const good = await call(`${app.url}/v1/files/presigned-url`, {
        key,
        body: zlib.gzipSync(JSON.stringify({ filename: 'a.pdf', purpose: 'assistants' })),
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      });
      expect(good.status).toBe(201);
      await expectHealthy();
    });

    it('removes the part file of an upload the client cuts off, at once', async () => {
      const { port } = new URL(app.url);
      const sockets = await Promise.all(
        Array.from({ length: 5 }, async () => {
          const socket = net.connect(Number(port), '127.0.0.1');
          await new Promise((resolve) => socket.once('connect', resolve));
          socket.write(
            'POST /v1/compat/files HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=zzz\r\n' +
              'Content-Length: 1000000\r\n\r\n' +
              '--zzz\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\n' +
              'y'.repeat(20_000),
          );
          return socket;
        }),
      );
      await waitFor(() => tmpArea().length === 5);
      for (const socket of sockets) socket.destroy();
      await waitFor(() => tmpArea().length === 0);
      expect(tmpArea()).toEqual([]);
      await expectHealthy();
    });

    it('keeps UTF-8 filenames of multipart uploads', async () => {
      const res = await uploadFile(app.url, key, Buffer.from([0xff, 0xd8, 0xff, 0xe0]), { filename: 'reçu €.jpg' });
      expect(res.status).toBe(201);
      expect(((await res.json()) as { filename: string }).filename).toBe('reçu €.jpg');
    });
  });

  describe('URLs the server would refuse', () => {
    it('refuses a loopback callback_url at submission', async () => {
      const res = await call(`${app.url}/v1/image/generate`, {
        key,
        json: {
          images: ['data:image/png;base64,AAAA'],
          domain: 'document.receipt',
          callback_url: 'http://127.0.0.1:9/hook',
        },
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ detail: { error: { code: 'url_not_allowed', param: 'callback_url' } } });
    });

    it('names the real path of a refused URL in a chat message', async () => {
      const res = await call(`${app.url}/v1/compat/chat/completions`, {
        key,
        json: {
          model: 'prism-1',
          messages: [
            { role: 'system', content: 'read it' },
            {
              role: 'user',
              content: [
                { type: 'text', text: 'what is this' },
                { type: 'image_url', image_url: { url: 'http://[::ffff:7f00:1]:9/x.png' } },
              ],
            },
          ],
        },
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        detail: { error: { code: 'url_not_allowed', param: 'messages.1.content.1.image_url' } },
      });
      await expectHealthy();
    });
    it('names the real path of a refused URL in embedding inputs', async () => {
      const refused = 'http://[::ffff:7f00:1]:9/x.png';
      const embed = (input: unknown) =>
        call(`${app.url}/v1/compat/embeddings`, { key, json: { model: 'prism-embed-mm-1', input } });
      const cases: [unknown, string][] = [
        [{ type: 'image_url', image_url: { url: refused } }, 'input.image_url'],
        [
          [
            { type: 'text', text: 'a' },
            { type: 'image_url', image_url: refused },
          ],
          'input.1.image_url',
        ],
        [
          [
            'hello',
            [
              { type: 'text', text: 'a' },
              { type: 'image_url', image_url: { url: refused } },
            ],
          ],
          'input.1.1.image_url',
        ],
      ];
      for (const [input, param] of cases) {
        const res = await embed(input);
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ detail: { error: { code: 'url_not_allowed', param } } });
      }
      await expectHealthy();
    });
  });

  describe('presigned uploads', () => {
    it('last PRISM_URL_TTL_S when no expiration is asked, and refuse a declared length over the limit up front', async () => {
      const before = Date.now();
      const res = await call(`${app.url}/v1/files/presigned-url`, { key, json: { filename: 'a.bin' } });
      expect(res.status).toBe(201);
      const presigned = (await res.json()) as { url: string; expiration: number; expires_at: string };
      expect(presigned.expiration).toBe(3600);
      const lifetime = Date.parse(presigned.expires_at) - before;
      expect(lifetime).toBeGreaterThan(3500_000);
      expect(lifetime).toBeLessThanOrEqual(3601_000);

      const { port } = new URL(app.url);
      const target = new URL(presigned.url);
      const socket = net.connect(Number(port), '127.0.0.1');
      const reply = await new Promise<string>((resolve) => {
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
        socket.on('close', () => resolve(text));
        socket.write(
          `PUT ${target.pathname}${target.search} HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\nConnection: close\r\n\r\nabc`,
        );
      });
      expect(reply).toMatch(/^HTTP\/1\.1 413/);
      expect(tmpArea()).toEqual([]);
      await expectHealthy();
    });
  });

  describe('4: files served from the API origin', () => {
    it('serves HTML and SVG as attachments with nosniff and a sandboxing CSP; PNG inline', async () => {
      const cases: [string, string, string][] = [
        ['x.html', 'text/html', 'attachment'],
        ['x.svg', 'image/svg+xml', 'attachment'],
        ['x.png', 'image/png', 'inline'],
      ];
      for (const [filename, type, disposition] of cases) {
        const form = new FormData();
        form.append('purpose', 'assistants');
        form.append('file', new Blob(['<script>alert(document.domain)</script>'], { type }), filename);
        const up = await call(`${app.url}/v1/compat/files`, { body: form });
        expect(up.status).toBe(201);
        const file = (await up.json()) as { id: string; public_url: string };
        const res = await fetch(file.public_url);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-disposition')).toMatch(new RegExp(`^${disposition};`));
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
        expect(res.headers.get('content-security-policy')).toMatch(/sandbox/);
        await res.arrayBuffer();
      }
      const own = await uploadFile(app.url, key, '<html><script>alert(1)</script>', { filename: 'mine.html' });
      const mine = (await own.json()) as { id: string };
      const download = await call(`${app.url}/v1/files/${mine.id}/content`, { key });
      expect(download.headers.get('content-disposition')).toMatch(/^attachment;/);
      expect(download.headers.get('x-content-type-options')).toBe('nosniff');
      await download.arrayBuffer();
    });
  });

  describe('8: pdfjs and the process globals', () => {
    it('leaves JSON.stringify, JSON.parse and Array.prototype.push native after a PDF request', async () => {
      const native = (f: unknown): boolean => Function.prototype.toString.call(f).includes('[native code]');
      const pdf = await makeTextPdf([['Invoice 42', 'Total 10.00']]);
      const up = (await (await uploadFile(app.url, key, pdf, { filename: 'a.pdf' })).json()) as { id: string };
      const res = await call(`${app.url}/v1/document/generate`, {
        key,
        json: { file_id: up.id, domain: 'document.invoice', batch: false },
      });
      expect(res.status).toBe(201);
      await res.json();
      expect(native(JSON.stringify)).toBe(true);
      expect(native(JSON.parse)).toBe(true);
      expect(native(Array.prototype.push)).toBe(true);
    });
  });

  describe('documents', () => {
    const generate = async (bytes: Buffer | string, filename: string) => {
      const up = (await (await uploadFile(app.url, key, bytes, { filename })).json()) as { id: string };
      return call(`${app.url}/v1/document/generate`, {
        key,
        json: { file_id: up.id, domain: 'document.invoice', batch: false },
      });
    };

    it('calls a zero-byte document an empty document, not an invalid image', async () => {
      const res = await generate(Buffer.alloc(0), 'empty.pdf');
      expect(res.status).toBe(400);
      const body = (await expectCleanJson(res)) as { detail: { error: { code: string; message: string } } };
      expect(body.detail.error.code).toBe('invalid_document');
      expect(body.detail.error.message).toMatch(/empty/);
    });

    it('does not ask to retry a PDF whose page tree is circular', async () => {
      const pdf = [
        '%PDF-1.4',
        '1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj',
        '2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj',
        '3 0 obj << /Type /Pages /Kids [2 0 R] /Count 1 >> endobj',
        'trailer << /Root 1 0 R >>',
        '%%EOF',
      ].join('\n');
      const res = await generate(pdf, 'loop.pdf');
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(JSON.stringify(await expectCleanJson(res))).not.toMatch(/Please retry/);
      await expectHealthy();
    });
  });

  describe('9: media', () => {
    it('refuses an ffconcat list that carries a control byte, before any tool reads it', async () => {
      const list = Buffer.from("ffconcat version 1.0\n# \x01\nfile '/etc/passwd'\n", 'latin1');
      const up = (await (await uploadFile(app.url, key, list, { filename: 'a.wav' })).json()) as { id: string };
      const res = await call(`${app.url}/v1/audio/generate`, {
        key,
        json: { file_id: up.id, domain: 'audio.transcription', batch: false },
      });
      expect(res.status).toBe(400);
      expect(await expectCleanJson(res)).toMatchObject({ detail: { error: { code: 'invalid_media' } } });
      await expectHealthy();
    });
  });
});

describe('guest upload quota', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ PRISM_GUEST_UPLOADS_PER_DAY: '2', PRISM_GUEST_UPLOAD_MB_PER_DAY: '0.0001' });
  });
  afterAll(() => app.close());

  it('refuses a guest past the daily count or bytes with 429 and keeps nothing', async () => {
    const up = (content: string) =>
      uploadFile(app.url, undefined, content, { prefix: '/v1/compat/files', fields: { purpose: 'assistants' } });
    expect((await up('a'.repeat(60))).status).toBe(201);
    const overBytes = await up('b'.repeat(60));
    expect(overBytes.status).toBe(429);
    expect(overBytes.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await overBytes.json()).toMatchObject({ error: { code: 'guest_upload_quota' } });
    expect((await up('c')).status).toBe(201);
    expect((await up('d')).status).toBe(429);
    expect(fs.readdirSync(path.join(app.dataDir, 'blobs', 'tmp'))).toEqual([]);
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
}

describe('document page cap', () => {
  it('says in usage.message that a PDF over the page cap was read in part', async () => {
    const app = await startTestApp({ PRISM_DOCUMENT_MAX_PAGES: '1' });
    try {
      const key = await app.createKey('pages', 'pro');
      const pdf = await makeTextPdf([
        ['Invoice 1', 'Total 5.00'],
        ['Page two', 'More text'],
      ]);
      const up = (await (await uploadFile(app.url, key, pdf, { filename: 'two.pdf' })).json()) as { id: string };
      const res = await call(`${app.url}/v1/document/generate`, {
        key,
        json: { file_id: up.id, domain: 'document.invoice', batch: false },
      });
      expect(res.status).toBe(201);
      const body = (await res.json()) as { usage: { message: string | null } };
      expect(body.usage.message).toMatch(/2 pages; only the first 1 were read/);
    } finally {
      await app.close();
    }
  });
});

describe('data folder permissions', () => {
  it('creates prism.db (and its WAL files) readable by the owner only', async () => {
    const app = await startTestApp(ON_SQLITE);
    try {
      for (const name of ['prism.db', 'prism.db-wal', 'prism.db-shm']) {
        const file = path.join(app.dataDir, name);
        if (fs.existsSync(file)) expect(fs.statSync(file).mode & 0o077).toBe(0);
      }
      expect(fs.existsSync(path.join(app.dataDir, 'prism.db'))).toBe(true);
    } finally {
      await app.close();
    }
  });
});
