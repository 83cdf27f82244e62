/**
 * Runs the blob store conformance suite against the local folder (the default store).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createFsBlobStore } from '../../src/blobs/fs.blob-store';
import { describeBlobStoreConformance } from './blob-store.conformance';

describeBlobStoreConformance('local folder', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-blobs-'));
  return {
    store: createFsBlobStore(dir),
    partsDir: path.join(dir, 'tmp'),
    close: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
});
