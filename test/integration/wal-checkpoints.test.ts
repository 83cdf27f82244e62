/**
 * The server checkpoints SQLite's WAL on a worker thread (PRISM_WAL_CHECKPOINT_MS), so its own connection never
 * does; with the setting at 0 SQLite's default stays. The checkpointer itself is tested in test/unit/stores.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ON_SQLITE, startTestApp, type TestApp } from '../helpers/test-app';
import { rawSql } from '../helpers/raw-sql';

const autocheckpointPages = (app: TestApp): unknown =>
  rawSql(app.container).sqlite().pragma('wal_autocheckpoint', { simple: true });

describe('WAL checkpoints in the server', () => {
  it('are off in the main connection while the worker runs, and the log is folded in at shutdown', async () => {
    const app = await startTestApp({ ...ON_SQLITE, PRISM_WAL_CHECKPOINT_MS: '50' });
    try {
      expect(autocheckpointPages(app)).toBe(0);
      for (let i = 0; i < 20; i += 1) await app.createKey(`org-${i}`);
    } finally {
      await app.stop();
    }
    expect(fs.existsSync(path.join(app.dataDir, 'prism.db-wal'))).toBe(false);
    fs.rmSync(app.dataDir, { recursive: true, force: true });
  });

  it('stay in commits with PRISM_WAL_CHECKPOINT_MS=0', async () => {
    const app = await startTestApp({ ...ON_SQLITE, PRISM_WAL_CHECKPOINT_MS: '0' });
    try {
      expect(autocheckpointPages(app)).toBe(1000);
    } finally {
      await app.close();
    }
  });
});
