/**
 * Bounded, offline fuzzing of every route: a few thousand generated hostile requests — deep nesting,
 * huge strings, wrong types, malformed and truncated JSON, truncated and garbled multipart, random bytes as media,
 * garbage query strings — from a fixed seed, so a failure replays. The server must stay up, answer every request
 * with a 4xx or at worst a JSON 500 that carries no stack or path, and leave nothing in the blob store's temp area.
 */
import fs from 'node:fs';
import path from 'node:path';
import { call, startTestApp, type TestApp } from '../helpers/test-app';

const REQUESTS = 1600;
const CONCURRENCY = 8;

/** mulberry32: small, fast, seeded. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const JSON_ROUTES = [
  '/v1/compat/chat/completions',
  '/v1/openai/chat/completions',
  '/v1/compat/embeddings',
  '/v1/openai/embeddings',
  '/v1/files/presigned-url',
  '/v1/compat/files/presigned-url',
  '/v1/image/generate',
  '/v1/document/generate',
  '/v1/video/generate',
  '/v1/audio/generate',
  '/v1/image/schema',
  '/v1/hub/schema',
  '/v1/schema',
  '/v1/feedback/submit',
  '/v1/experimental/feedback/submit',
];
const UPLOAD_ROUTES = ['/v1/files', '/v1/compat/files', '/v1/openai/files'];
const GET_ROUTES = [
  '/v1/files',
  '/v1/compat/files',
  '/v1/files/file-x',
  '/v1/files/file-x/content',
  '/v1/files/hash/abc',
  '/v1/files/verify-upload/x',
  '/v1/predictions',
  '/v1/predictions/x',
  '/v1/predictions/x/domain',
  '/v1/feedback/x',
  '/v1/hub/domains',
  '/v1/hub/info',
  '/v1/domains',
  '/v1/models',
  '/v1/compat/models',
  '/v1/compat/models/x',
  '/v1/health',
];
const FIELDS = [
  'model',
  'messages',
  'input',
  'images',
  'file_id',
  'url',
  'domain',
  'config',
  'metadata',
  'json_schema',
  'filename',
  'purpose',
  'expiration',
  'callback_url',
  'batch',
  'max_tokens',
  'stream',
  'response_format',
  'request_id',
  'response',
  'notes',
];

interface Fuzzed {
  method: string;
  route: string;
  body?: Buffer | string;
  headers: Record<string, string>;
  keyed: boolean;
}

function generator(random: () => number) {
  const int = (n: number): number => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const bytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => int(256)));
  const nested = (depth: number): string => {
    const open = random() < 0.5 ? '[' : '{"a":';
    const close = open === '[' ? ']' : '}';
    return open.repeat(depth) + (open === '[' ? '' : '1') + close.repeat(depth);
  };
  const value = (depth = 0): unknown => {
    switch (int(depth > 3 ? 6 : 9)) {
      case 0:
        return null;
      case 1:
        return random() * 1e12 - 5e11;
      case 2:
        return random() < 0.5;
      case 3:
        return 'x'.repeat(int(64));
      case 4:
        return `data:image/png;base64,${bytes(int(512)).toString('base64')}`;
      case 5:
        return pick(['http://127.0.0.1/x', 'file:///etc/passwd', 'http://[::ffff:127.0.0.1]/', 'ftp://x', '']);
      case 6:
        return Array.from({ length: int(4) }, () => value(depth + 1));
      case 7:
        return Object.fromEntries(Array.from({ length: int(4) }, () => [pick(FIELDS), value(depth + 1)]));
      default:
        return { role: pick(['user', 'system', 'tool', 7]), content: value(depth + 1) };
    }
  };
  const jsonBody = (): string => {
    switch (int(7)) {
      case 0:
        return nested(50 + int(20_000));
      case 1:
        return JSON.stringify({ [pick(FIELDS)]: 'y'.repeat(50_000 + int(250_000)) });
      case 2:
        return JSON.stringify(Object.fromEntries(FIELDS.filter(() => random() < 0.4).map((f) => [f, value()])));
      case 3:
        return `{"${pick(FIELDS)}":${nested(100 + int(3000))}}`;
      case 4:
        return JSON.stringify(value()).slice(0, int(40));
      case 5:
        return JSON.stringify({
          model: pick(['prism-1', 'prism-orion-1', 'nope', 3]),
          messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: value(4) } }] }],
          images: [value(4)],
        });
      default:
        return bytes(int(2048)).toString('latin1');
    }
  };
  const multipart = (): { body: Buffer; type: string } => {
    const boundary = pick(['zzz', 'a'.repeat(70), '']);
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="${pick(['file', 'purpose', 'x'])}"; filename="${pick(['a.jpg', 'reçu €.pdf', '../../etc', '"'])}"\r\nContent-Type: ${pick(['image/png', 'text/html', 'application/pdf', 'x'])}\r\n\r\n`;
    const parts = [Buffer.from(head), bytes(int(4096))];
    if (random() < 0.4) parts.push(Buffer.from(`\r\n--${boundary}--\r\n`));
    let body = Buffer.concat(parts);
    if (random() < 0.3) body = body.subarray(0, int(body.length));
    const type = pick([
      `multipart/form-data; boundary=${boundary}`,
      'multipart/form-data',
      `multipart/form-data; boundary="${boundary}"; charset=utf-16`,
    ]);
    return { body, type };
  };
  const query = (): string =>
    random() < 0.5
      ? ''
      : `?${pick(['limit', 'offset', 'signature', 'expires', 'generate_public_url', 'type', 'purpose'])}=${encodeURIComponent(pick(['-1', '1e309', 'x'.repeat(5000), '[]', '%', 'true']))}`;

  return (): Fuzzed => {
    const keyed = random() < 0.6;
    const roll = random();
    if (roll < 0.65) {
      const headers: Record<string, string> = {
        'content-type': pick([
          'application/json',
          'application/json; charset=utf-8',
          'application/json; charset=koi8-r',
        ]),
      };
      let body: Buffer | string = jsonBody();
      if (random() < 0.05) {
        headers['content-encoding'] = pick(['gzip', 'br', 'deflate', 'x-unknown']);
        body = bytes(int(256));
      }
      return { method: 'POST', route: pick(JSON_ROUTES) + query(), body, headers, keyed };
    }
    if (roll < 0.85) {
      const { body, type } = multipart();
      return { method: 'POST', route: pick(UPLOAD_ROUTES) + query(), body, headers: { 'content-type': type }, keyed };
    }
    if (roll < 0.95) return { method: 'GET', route: pick(GET_ROUTES) + query(), headers: {}, keyed };
    return {
      method: pick(['PUT', 'DELETE', 'PATCH']),
      route: `/v1/files/file-${int(1000)}/upload${query()}`,
      body: bytes(int(1024)),
      headers: { 'content-type': pick(['application/octet-stream', 'application/json']) },
      keyed,
    };
  };
}

describe('hostile fuzzing of every route', () => {
  let app: TestApp;
  let key: string;

  beforeAll(async () => {
    app = await startTestApp({
      PRISM_RATE_LIMIT_PER_MINUTE: '1000000',
      PRISM_RATE_LIMIT_PER_HOUR: '1000000',
      PRISM_GUEST_UPLOADS_PER_DAY: '1000000',
      PRISM_MAX_JSON_BYTES: String(4 * 1024 * 1024),
      PRISM_MAX_UPLOAD_BYTES: String(1024 * 1024),
    });
    key = await app.createKey('fuzz', 'pro');
    await app.container.services.accounts.addCredits('fuzz', 5);
  });
  afterAll(() => app.close());

  it(`answers ${REQUESTS} generated hostile requests without a crash, a stack or a leftover temp file`, async () => {
    const next = generator(prng(18));
    const cases = Array.from({ length: REQUESTS }, next);
    const problems: string[] = [];
    let index = 0;
    const worker = async (): Promise<void> => {
      while (index < cases.length) {
        const fuzzed = cases[index++]!;
        const res = await call(`${app.url}${fuzzed.route}`, {
          method: fuzzed.method,
          headers: fuzzed.headers,
          ...(fuzzed.body === undefined ? {} : { body: fuzzed.body }),
          ...(fuzzed.keyed ? { key } : {}),
        });
        const text = await res.text();
        const where = `${fuzzed.method} ${fuzzed.route.slice(0, 80)} -> ${res.status}`;
        if (/\n\s+at |node_modules|\/work\/|\/tmp\/|<html|\.ts:\d+/i.test(text)) problems.push(`${where}: leaks`);
        if (res.status >= 500 && (res.status !== 500 || !/"code":"internal_error"/.test(text))) {
          problems.push(`${where}: ${text.slice(0, 200)}`);
        }
        if (res.status >= 400 && !/^application\/json/.test(res.headers.get('content-type') ?? '')) {
          problems.push(`${where}: not JSON`);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    expect(problems).toEqual([]);
    expect((await call(`${app.url}/v1/compat/health`)).status).toBe(200);
    const tmp = path.join(app.dataDir, 'blobs', 'tmp');
    const left = fs.existsSync(tmp) ? fs.readdirSync(tmp) : [];
    expect(left).toEqual([]);
  }, 120_000);
});
