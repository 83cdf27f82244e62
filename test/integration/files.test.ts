/**
 * Files API over HTTP: upload, hash lookup, list bounds, get, delete by tier, public links, presigned flow,
 * organisation isolation and size limits, against the real app on a real SQLite file.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { call, listTree, startTestApp, storedBlobs, uploadFile, type TestApp } from '../helpers/test-app';

/** The blobs the app keeps and the upload parts it has staged (wherever its blob store keeps blobs). */
const kept = (app: TestApp): string[] => [
  ...storedBlobs(app.dataDir),
  ...listTree(path.join(app.dataDir, 'blobs', 'tmp')),
];

const md5 = (text: string | Buffer): string => createHash('md5').update(text).digest('hex');

describe('Files API', () => {
  let app: TestApp;
  let freeKey: string;
  let proKey: string;
  let otherOrgKey: string;

  beforeAll(async () => {
    app = await startTestApp({ PRISM_MAX_UPLOAD_BYTES: '4096' });
    freeKey = await app.createKey('acme');
    proKey = await app.createKey('pro-co', 'pro');
    otherOrgKey = await app.createKey('globex');
  });
  afterAll(() => app.close());

  it('uploads a file and returns the record with 201', async () => {
    const res = await uploadFile(app.url, freeKey, 'hello world', {
      filename: 'greeting.txt',
      query: 'purpose=vision',
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      object: 'file',
      filename: 'greeting.txt',
      bytes: 11,
      purpose: 'vision',
      md5: md5('hello world'),
    });
    expect(typeof body.id).toBe('string');
    expect(Number.isInteger(body.bytes)).toBe(true);
    expect(new Date(body.created_at as string).toISOString()).toBe(body.created_at);
    expect(body.public_url).toMatch(/\/v1\/files\/.+\/content\?expires=\d+&signature=[0-9a-f]{64}$/);
  });

  it('defaults purpose to assistants and rejects an unknown purpose with 422 leaving nothing behind', async () => {
    const ok = await uploadFile(app.url, freeKey, 'default purpose');
    expect(((await ok.json()) as { purpose: string }).purpose).toBe('assistants');

    const before = kept(app).length;
    const bad = await uploadFile(app.url, freeKey, 'never stored', { query: 'purpose=poetry' });
    expect(bad.status).toBe(422);
    const body = (await bad.json()) as { detail: { type: string; loc: string[] }[] };
    expect(body.detail[0]).toMatchObject({ type: 'enum', loc: ['query', 'purpose'] });
    expect(kept(app).length).toBe(before);
    const miss = await call(`${app.url}/v1/files/hash/${md5('never stored')}`, { key: freeKey });
    expect(miss.status).toBe(404);
  });

  it('says which part is missing when there is no file part', async () => {
    const form = new FormData();
    form.append('other', 'x');
    const res = await call(`${app.url}/v1/files`, { key: freeKey, body: form });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      detail: [{ type: 'missing', loc: ['body', 'file'], msg: 'Field required', input: null }],
    });
  });

  it('honours generate_public_url=false', async () => {
    const res = await uploadFile(app.url, freeKey, 'no link please', { query: 'generate_public_url=false' });
    expect(((await res.json()) as { public_url: unknown }).public_url).toBeNull();
  });

  it('finds a file by md5 and answers 404 for an unknown hash', async () => {
    const content = `hash me ${Date.now()}`;
    const created = (await (await uploadFile(app.url, freeKey, content)).json()) as { id: string };
    const hit = await call(`${app.url}/v1/files/hash/${md5(content)}`, { key: freeKey });
    expect(hit.status).toBe(200);
    expect(((await hit.json()) as { id: string }).id).toBe(created.id);
    const miss = await call(`${app.url}/v1/files/hash/${'0'.repeat(32)}`, { key: freeKey });
    expect(miss.status).toBe(404);
    expect(await miss.json()).toMatchObject({ detail: { error: { type: 'not_found_error', code: 'file_not_found' } } });
    const malformed = await call(`${app.url}/v1/files/hash/not-a-hash`, { key: freeKey });
    expect(malformed.status).toBe(422);
  });

  it('lists newest first within skip/limit bounds', async () => {
    const key = await app.createKey('lister');
    for (const n of [1, 2, 3]) await uploadFile(app.url, key, `file ${n}`, { filename: `f${n}.txt` });
    const all = (await (await call(`${app.url}/v1/files`, { key })).json()) as { filename: string }[];
    expect(all.map((f) => f.filename)).toEqual(['f3.txt', 'f2.txt', 'f1.txt']);
    const page = (await (await call(`${app.url}/v1/files?skip=1&limit=1`, { key })).json()) as { filename: string }[];
    expect(page.map((f) => f.filename)).toEqual(['f2.txt']);

    const cases: [string, string][] = [
      ['skip=-1', 'greater_than_equal'],
      ['limit=0', 'greater_than_equal'],
      ['limit=1001', 'less_than_equal'],
      ['limit=ten', 'int_parsing'],
    ];
    for (const [query, type] of cases) {
      const res = await call(`${app.url}/v1/files?${query}`, { key });
      expect(res.status).toBe(422);
      const body = (await res.json()) as { detail: { type: string; loc: string[]; input: unknown }[] };
      expect(body.detail[0]?.type).toBe(type);
      expect(body.detail[0]?.loc).toEqual(['query', query.split('=')[0]]);
      expect(body.detail[0]?.input).toBe(query.split('=')[1]);
    }
    const max = await call(`${app.url}/v1/files?limit=1000`, { key });
    expect(max.status).toBe(200);
  });

  it('gets a file by id and serves its bytes through the signed public link only', async () => {
    const created = (await (await uploadFile(app.url, freeKey, 'public bytes')).json()) as {
      id: string;
      public_url: string;
    };
    const got = await call(`${app.url}/v1/files/${created.id}`, { key: freeKey });
    expect(got.status).toBe(200);

    const link = await fetch(created.public_url);
    expect(link.status).toBe(200);
    expect(await link.text()).toBe('public bytes');

    const tampered = await fetch(
      created.public_url.replace(/signature=([0-9a-f])/, (_m, c: string) => `signature=${c === 'a' ? 'b' : 'a'}`),
    );
    expect(tampered.status).toBe(404);
    const unsigned = await fetch(`${app.url}/v1/files/${created.id}/content`);
    expect(unsigned.status).toBe(401);
    const withKey = await call(`${app.url}/v1/files/${created.id}/content`, { key: freeKey });
    expect(await withKey.text()).toBe('public bytes');
  });

  it("isolates organisations: another org's file looks absent", async () => {
    const content = `secret ${Date.now()}`;
    const created = (await (await uploadFile(app.url, freeKey, content)).json()) as { id: string };
    expect((await call(`${app.url}/v1/files/${created.id}`, { key: otherOrgKey })).status).toBe(404);
    expect((await call(`${app.url}/v1/files/hash/${md5(content)}`, { key: otherOrgKey })).status).toBe(404);
    expect((await call(`${app.url}/v1/files/${created.id}/content`, { key: otherOrgKey })).status).toBe(404);
    expect((await call(`${app.url}/v1/files/${created.id}`, { key: proKey, method: 'DELETE' })).status).toBe(404);
    const list = (await (await call(`${app.url}/v1/files?limit=1000`, { key: otherOrgKey })).json()) as {
      id: string;
    }[];
    expect(list.map((f) => f.id)).not.toContain(created.id);
  });

  it('lets only Pro and Enterprise delete, and removes bytes no other file uses', async () => {
    const free = (await (await uploadFile(app.url, freeKey, 'free tier file')).json()) as { id: string };
    const denied = await call(`${app.url}/v1/files/${free.id}`, { key: freeKey, method: 'DELETE' });
    expect(denied.status).toBe(403);
    expect(await denied.json()).toMatchObject({
      detail: { error: { type: 'permission_error', code: 'tier_not_allowed' } },
    });
    expect((await call(`${app.url}/v1/files/${free.id}`, { key: freeKey })).status).toBe(200);

    const shared = `shared content ${Date.now()}`;
    const first = (await (await uploadFile(app.url, proKey, shared)).json()) as { id: string };
    const second = (await (await uploadFile(app.url, proKey, shared)).json()) as { id: string };
    const blobCount = () => storedBlobs(app.dataDir).length;
    const before = blobCount();

    const deleted = await call(`${app.url}/v1/files/${first.id}`, { key: proKey, method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toMatchObject({ id: first.id, object: 'file', deleted: true });
    expect(blobCount()).toBe(before);
    expect((await call(`${app.url}/v1/files/${first.id}`, { key: proKey })).status).toBe(404);

    await call(`${app.url}/v1/files/${second.id}`, { key: proKey, method: 'DELETE' });
    expect(blobCount()).toBe(before - 1);
    expect((await call(`${app.url}/v1/files/${first.id}`, { key: proKey, method: 'DELETE' })).status).toBe(404);
  });

  it('rejects uploads over the limit with 413 and keeps nothing, with or without Content-Length', async () => {
    const blobsBefore = kept(app);
    const big = Buffer.alloc(8192, 'x');
    const res = await uploadFile(app.url, freeKey, big, { filename: 'big.bin' });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ detail: { error: { code: 'payload_too_large' } } });

    const chunked = await fetch(`${app.url}/v1/files`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${freeKey}`,
        'content-type': 'multipart/form-data; boundary=XYZ',
      },
      body: streamOf([
        '--XYZ\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n',
        big.toString(),
        '\r\n--XYZ--\r\n',
      ]),
      duplex: 'half',
    });
    expect(chunked.status).toBe(413);
    expect(kept(app)).toEqual(blobsBefore);
    expect((await call(`${app.url}/v1/files/hash/${md5(big)}`, { key: freeKey })).status).toBe(404);
  });

  it('runs the presigned-URL flow: request, PUT the bytes, verify', async () => {
    const created = await call(`${app.url}/v1/files/presigned-url`, {
      key: freeKey,
      json: { filename: 'report.pdf', purpose: 'assistants', expiration: 600 },
    });
    expect(created.status).toBe(201);
    const presigned = (await created.json()) as Record<string, string | null>;
    expect(presigned).toMatchObject({ filename: 'report.pdf', upload_method: 'PUT', public_url: null });
    for (const key of ['id', 'url', 'content_type', 'created_at']) expect(presigned[key]).toBeTruthy();

    const early = await call(`${app.url}/v1/files/verify-upload/${presigned.id}`, { key: freeKey });
    expect(early.status).toBe(409);
    expect((await call(`${app.url}/v1/files/${presigned.id}`, { key: freeKey })).status).toBe(404);

    const url = presigned.url as string;
    const forged = await fetch(url.replace(/expires=\d+/, 'expires=9999999999'), { method: 'PUT', body: 'x' });
    expect(forged.status).toBe(404);

    const put = await fetch(url, {
      method: 'PUT',
      body: '%PDF-1.4 fake',
      headers: { 'content-type': 'application/pdf' },
    });
    expect(put.status).toBe(200);
    const again = await fetch(url, { method: 'PUT', body: 'other bytes' });
    expect(again.status).toBe(409);

    const verified = await call(`${app.url}/v1/files/verify-upload/${presigned.id}`, { key: freeKey });
    expect(verified.status).toBe(200);
    expect(await verified.json()).toMatchObject({ id: presigned.id, bytes: 13, md5: md5('%PDF-1.4 fake') });
    expect((await call(`${app.url}/v1/files/verify-upload/${presigned.id}`, { key: otherOrgKey })).status).toBe(404);
  });

  it('validates the presigned-URL body', async () => {
    const res = await call(`${app.url}/v1/files/presigned-url`, {
      key: freeKey,
      json: { purpose: 'vision', expiration: 5 },
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { detail: { type: string; loc: string[] }[] };
    expect(body.detail).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'missing', loc: ['body', 'filename'], msg: 'Field required' }),
        expect.objectContaining({ type: 'greater_than_equal', loc: ['body', 'expiration'], ctx: { ge: 60 } }),
      ]),
    );
  });
});

function streamOf(parts: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    pull(controller) {
      const next = parts.shift();
      if (next === undefined) controller.close();
      else controller.enqueue(encoder.encode(next));
    },
  });
}
