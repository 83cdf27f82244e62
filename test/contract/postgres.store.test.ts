/**
 * Runs every store conformance suite against PostgreSQL (a fresh schema per test, dropped after), plus what only
 * the PostgreSQL backend promises: migrations recorded once under the advisory lock, also when replicas start at
 * once. Skips with one line unless PRISM_TEST_DATABASE_URL is set.
 */
import { createPool, migratePostgres, migrationFiles } from '../../src/backend/postgres/database';
import { describePostgres, dropTestSchema, TEST_DATABASE_URL, testSchemaName } from '../helpers/pg-schema';
import { describeRecordsConformance } from './records.conformance';
import { describeSkillStoreConformance } from './skill-store.conformance';
import { openPostgresStores } from './store-backends';
import { describeStoreConformance } from './store.conformance';

describePostgres('postgres backend', () => {
  describeStoreConformance('postgres', async () => {
    const { stores, close } = await openPostgresStores();
    return { ...stores, close };
  });
  describeSkillStoreConformance('postgres', async () => {
    const { stores, close } = await openPostgresStores();
    return { accounts: stores.accounts, skills: stores.skills, close };
  });
  describeRecordsConformance('postgres', openPostgresStores);

  it('applies migrations once, in order, when three replicas start at the same moment', async () => {
    const schema = testSchemaName();
    const pools = [1, 2, 3].map(() => createPool({ url: TEST_DATABASE_URL as string, schema, max: 2 }));
    try {
      const applied = await Promise.all(pools.map((pool) => migratePostgres(pool, schema)));
      const all = migrationFiles().map((m) => m.version);
      expect(applied.filter((versions) => versions.length > 0)).toEqual([all]);
      const { rows } = await pools[0]!.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY 1');
      expect(rows.map((r) => r.version)).toEqual(all);
      expect(all).toEqual(expect.arrayContaining([1, 2, 4, 5, 6, 7, 8, 10, 11]));
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
      await dropTestSchema(schema);
    }
  });
});
