/**
 * Crash safety and shutdown of a real server process: a SIGKILL in the middle of an upload leaves no blob and
 * no record (the next start removes the partial bytes), orphan blobs are swept, and SIGTERM lets a request in
 * flight finish before the process exits.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { listTree } from '../helpers/test-app';
import { startChildServer } from '../helpers/child-server';

const BOUNDARY = 'prismcrashtest';

function openUpload(url: string, key: string): http.ClientRequest {
  const req = http.request(`${url}/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
  });
  req.on('error', () => undefined);
  req.write(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n`);
  return req;
}

function finishUpload(req: http.ClientRequest): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(`\r\n--${BOUNDARY}--\r\n`);
  });
}

/** These tests count blobs: keep the built-in skills (seeded at start, each a blob) out of the data folder. */
const noBuiltinSkills = (): Record<string, string> => ({ PRISM_SKILLS_DIR: path.join(os.tmpdir(), 'prism-no-skills') });

async function waitFor(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function listFiles(url: string, key: string): Promise<unknown[]> {
  const res = await fetch(`${url}/v1/files?limit=1000`, { headers: { authorization: `Bearer ${key}` } });
  return (await res.json()) as unknown[];
}

describe('crash safety', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-crash-'));
  });
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('leaves no half-written blob and no orphan record after a kill mid-upload', async () => {
    const first = await startChildServer(dataDir, noBuiltinSkills());
    const key = fs.readFileSync(path.join(dataDir, 'owner.key'), 'utf8').trim();
    const tmpDir = path.join(dataDir, 'blobs', 'tmp');
    const req = openUpload(first.url, key);
    const chunk = Buffer.alloc(256 * 1024, 7);
    req.write(chunk);
    await waitFor(() => listTree(tmpDir).some((f) => fs.statSync(path.join(tmpDir, f)).size > 0), 'a partial write');

    first.child.kill('SIGKILL');
    await first.exited;
    req.destroy();
    expect(listTree(tmpDir).length).toBe(1);
    expect(listTree(path.join(dataDir, 'blobs', 'sha256'))).toEqual([]);

    const orphan = path.join(dataDir, 'blobs', 'sha256', 'ab', 'cd', `abcd${'0'.repeat(60)}`);
    fs.mkdirSync(path.dirname(orphan), { recursive: true });
    fs.writeFileSync(orphan, 'bytes no record refers to');

    const second = await startChildServer(dataDir, noBuiltinSkills());
    try {
      expect(listTree(tmpDir)).toEqual([]);
      expect(fs.existsSync(orphan)).toBe(false);
      expect(await listFiles(second.url, key)).toEqual([]);

      const retry = openUpload(second.url, key);
      retry.write(chunk);
      const done = await finishUpload(retry);
      expect(done.status).toBe(201);
      expect(await listFiles(second.url, key)).toHaveLength(1);
      expect(listTree(path.join(dataDir, 'blobs', 'sha256'))).toHaveLength(1);
    } finally {
      second.child.kill('SIGKILL');
      await second.exited;
    }
  });

  it('finishes a request in flight on SIGTERM, then exits 0', async () => {
    const server = await startChildServer(dataDir, noBuiltinSkills());
    const key = fs.readFileSync(path.join(dataDir, 'owner.key'), 'utf8').trim();
    const req = openUpload(server.url, key);
    req.write(Buffer.alloc(64 * 1024, 1));
    const tmpDir = path.join(dataDir, 'blobs', 'tmp');
    await waitFor(() => listTree(tmpDir).length > 0, 'the upload to start');

    server.child.kill('SIGTERM');
    await waitFor(() => server.stderr().includes('SIGTERM received'), 'the signal to be handled');
    req.write(Buffer.alloc(64 * 1024, 2));
    const done = await finishUpload(req);
    expect(done.status).toBe(201);
    expect(JSON.parse(done.body)).toMatchObject({ bytes: 128 * 1024 });
    expect(await server.exited).toBe(0);
  });
});
