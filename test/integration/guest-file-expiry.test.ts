/**
 * Issue 18, defect 6 (the rest of it): guests' uploads expire. Files of guest organisations older than
 * PRISM_GUEST_FILE_TTL_H are deleted by a sweep (at start, then periodically) with their bytes, unless another
 * record still uses those bytes; an organisation's files are never touched. The sweep's clock is injected.
 */
import fs from 'node:fs';
import { createHash } from 'node:crypto';
import { call, startTestApp, storedBlobs, uploadFile, type TestApp } from '../helpers/test-app';

const HOUR = 3_600_000;
const sha = (content: string): string => createHash('sha256').update(content).digest('hex');
const guestUpload = async (app: TestApp, content: string): Promise<string> => {
  const res = await uploadFile(app.url, undefined, content, {
    prefix: '/v1/compat/files',
    fields: { purpose: 'assistants' },
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
};
const blobNames = (app: TestApp): string => storedBlobs(app.dataDir).join(' ');

describe('guest file expiry', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ PRISM_GUEST_FILE_TTL_H: '24' });
  });
  afterAll(() => app.close());

  it('deletes guest files past the lifetime with their bytes, keeps younger ones and bytes still in use', async () => {
    const lonely = 'guest-only bytes ' + 'x'.repeat(40);
    const shared = 'bytes a member also uploaded ' + 'y'.repeat(40);
    const lonelyId = await guestUpload(app, lonely);
    const sharedId = await guestUpload(app, shared);
    const key = await app.createKey('member');
    const member = await uploadFile(app.url, key, shared, { filename: 'same.txt' });
    expect(member.status).toBe(201);
    const memberId = ((await member.json()) as { id: string }).id;
    expect((await call(`${app.url}/v1/compat/files/${lonelyId}`)).status).toBe(200);

    const files = app.container.services.files;
    // An hour on, nothing has expired.
    expect(await files.sweepGuestFiles(new Date(Date.now() + HOUR))).toBe(0);
    expect((await call(`${app.url}/v1/compat/files/${lonelyId}`)).status).toBe(200);

    // A day and an hour on, both guest files go; the member's file and the bytes it shares stay.
    expect(await files.sweepGuestFiles(new Date(Date.now() + 25 * HOUR))).toBe(2);
    expect((await call(`${app.url}/v1/compat/files/${lonelyId}`)).status).toBe(404);
    expect((await call(`${app.url}/v1/compat/files/${sharedId}`)).status).toBe(404);
    expect(blobNames(app)).not.toContain(sha(lonely));
    expect(blobNames(app)).toContain(sha(shared));
    const kept = await call(`${app.url}/v1/files/${memberId}/content`, { key });
    expect(kept.status).toBe(200);
    expect(await kept.text()).toBe(shared);
  });
});

describe('guest file expiry at start', () => {
  it('the start-up sweep removes guest files that expired while the server was down', async () => {
    const first = await startTestApp({ PRISM_GUEST_FILE_TTL_H: '1' });
    const content = 'left behind by a guest ' + 'z'.repeat(40);
    const id = await guestUpload(first, content);
    await first.stop();
    // 0.0001 h is 360 ms: by the time the server is up again the file is older than that.
    const started = Date.now();
    while (Date.now() - started < 400) await new Promise((resolve) => setTimeout(resolve, 50));
    const second = await startTestApp({ PRISM_GUEST_FILE_TTL_H: '0.0001' }, first.dataDir);
    try {
      for (let i = 0; i < 100 && blobNames(second).includes(sha(content)); i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(blobNames(second)).not.toContain(sha(content));
      expect((await call(`${second.url}/v1/compat/files/${id}`)).status).toBe(404);
    } finally {
      await second.close();
    }
    expect(fs.existsSync(first.dataDir)).toBe(false);
  });
});
