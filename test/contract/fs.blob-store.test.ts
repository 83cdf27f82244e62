/**
 * Runs the blob store conformance suite against the local folder (the default store).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createFsBlobStore } from '../../src/backend/local/blob-store';
import { describeBlobStoreConformance } from './blob-store.conformance';

describeBlobStoreConformance('local folder', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-blobs-'));
  return {
    store: createFsBlobStore(dir),
    partsDir: path.join(dir, 'tmp'),
    close: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
});

describe('local folder shared by replicas', () => {
  it('leaves unreferenced blobs younger than orphanMinAgeMs to a later sweep', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-blobs-'));
    try {
      const store = createFsBlobStore(dir, { orphanMinAgeMs: 60_000 });
      const young = await store.stage(Readable.from([Buffer.from('young')]), { maxBytes: 10 });
      await young.commit();
      const old = await store.stage(Readable.from([Buffer.from('old')]), { maxBytes: 10 });
      await old.commit();
      const oldFile = path.join(dir, 'sha256', old.stored.sha256.slice(0, 2), old.stored.sha256.slice(2, 4));
      const past = new Date(Date.now() - 120_000);
      fs.utimesSync(path.join(oldFile, old.stored.sha256), past, past);
      expect(await store.sweep(new Set())).toEqual({ partsRemoved: 0, orphansRemoved: 1 });
      expect(await store.read(young.stored.sha256)).not.toBeNull();
      expect(await store.read(old.stored.sha256)).toBeNull();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
