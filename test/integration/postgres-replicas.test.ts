/**
 * Three processes' containers starting at the same moment on one empty PostgreSQL schema: migrations and the
 * checkpoint set-up run once under their advisory locks, exactly one of them creates the owner, and a key made
 * through one is accepted by another (no replica keeps a key cache). Skips with one line unless
 * PRISM_TEST_DATABASE_URL is set.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/config';
import { createContainer, type Container } from '../../src/container';
import { describePostgres, dropTestSchema, TEST_DATABASE_URL, testSchemaName } from '../helpers/pg-schema';

describePostgres('replicas on one PostgreSQL schema', () => {
  const schema = testSchemaName();
  const dirs = [1, 2, 3].map(() => fs.mkdtempSync(path.join(os.tmpdir(), 'prism-replica-')));
  let containers: Container[] = [];
  afterAll(async () => {
    await Promise.all(containers.map((c) => c.close()));
    await dropTestSchema(schema);
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('start together with one owner between them and see each other’s keys and revocations', async () => {
    containers = await Promise.all(
      dirs.map((dir) =>
        createContainer(
          loadConfig({
            PRISM_DATA_DIR: dir,
            PRISM_LOG_LEVEL: 'silent',
            PRISM_DATABASE_URL: TEST_DATABASE_URL,
            PRISM_DATABASE_SCHEMA: schema,
          }),
        ),
      ),
    );
    const started = await Promise.all(
      containers.map((c) => c.start({ sweep: false, resumeJobs: false, backgroundCheckpoints: false })),
    );
    expect(started.filter((s) => s.ownerKey !== null)).toHaveLength(1);
    const [a, b] = containers as [Container, Container];
    expect(await a.stores.accounts.countOrgs()).toBe(1);
    const created = await a.services.accounts.createKey({ org: 'shared-co', tier: 'pro' });
    const context = { clientIp: '127.0.0.1', surface: 'main' as const };
    await expect(b.services.auth.authenticate(`Bearer ${created.key}`, context)).resolves.toMatchObject({
      orgId: created.orgId,
    });
    await a.services.accounts.revokeKey(created.keyId);
    await expect(b.services.auth.authenticate(`Bearer ${created.key}`, context)).rejects.toMatchObject({
      status: 401,
    });
  }, 60_000);
});
