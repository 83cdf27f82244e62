/**
 * Shutdown runs every step even when one fails: with an extraction engine whose close() throws, the queued wallet
 * debits are still written and the database is still closed (the container's header promises exactly this).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { loadConfig } from '../../src/config/config';
import { createContainer } from '../../src/container';
import type { ExtractionEngine } from '../../src/engines/extraction-engine';
import { rawSql } from '../helpers/raw-sql';
import { testRedisUrl } from '../helpers/redis';

const refuse = (): Promise<never> => Promise.reject(new Error('not used in this test'));

/** An engine that only fails to close. */
const failingToClose: ExtractionEngine = {
  models: ['prism-1'],
  validateInput: refuse,
  read: refuse,
  fill: () => ({}),
  run: refuse,
  close: () => Promise.reject(new Error('engine would not stop')),
};

it('writes queued debits and closes the database when an earlier shutdown step throws', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-close-'));
  try {
    // A flush interval far beyond the test: only the shutdown can write the debit.
    const config = loadConfig({ PRISM_DATA_DIR: dataDir, PRISM_LOG_LEVEL: 'silent', PRISM_WALLET_FLUSH_MS: '10000' });
    const container = await createContainer(config, { engine: failingToClose });
    await container.start({ sweep: false, resumeJobs: false, backgroundCheckpoints: false });
    const org = await container.services.accounts.createKey({ org: 'close-test', tier: 'free' });
    await container.stores.wallets.credit(org.orgId, 5000, 'top-up');
    await container.stores.wallets.credit(org.orgId, -1200, 'queued debit');

    await expect(container.close()).rejects.toThrow(/engine: engine would not stop/);

    expect(rawSql(container).sqlite().open).toBe(false);
    const db = new Database(config.data.dbPath, { readonly: true });
    try {
      const entries = db
        .prepare('SELECT amount_micros AS amount, reason FROM wallet_entries WHERE org_id = ? ORDER BY id')
        .all(org.orgId);
      expect(entries).toEqual([
        { amount: 5000, reason: 'top-up' },
        { amount: -1200, reason: 'queued debit' },
      ]);
    } finally {
      db.close();
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

/** Open sockets of this process to Redis's port. */
const redisSockets = (): number =>
  (process as unknown as { _getActiveHandles(): { remotePort?: number }[] })
    ._getActiveHandles()
    .filter((h) => h.remotePort === 6379).length;

(testRedisUrl ? it : it.skip)(
  'closes the backend when a part fails to build (no Redis connection is left open)',
  async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-close-'));
    try {
      const modelsFile = path.join(dataDir, 'models.yaml');
      fs.writeFileSync(
        modelsFile,
        'models:\n  - id: broken\n    engine: { kind: upstream, upstream: nowhere, model: x }\n',
      );
      const before = redisSockets();
      const config = loadConfig({
        PRISM_DATA_DIR: dataDir,
        PRISM_LOG_LEVEL: 'silent',
        PRISM_MODELS_FILE: modelsFile,
        PRISM_REDIS_URL: testRedisUrl as string,
      });
      await expect(createContainer(config)).rejects.toThrow();
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(redisSockets()).toBe(before);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  },
);
