/**
 * `prism db migrate` and `prism db copy`: bring the configured database's schema up to date, and move a
 * single-user install (SQLite file + blob folder) onto PostgreSQL with every record and blob verified.
 */
import { parseArgs } from 'node:util';
import { createFsBlobStore } from '../backend/local/blob-store';
import { openBlobStore } from '../backend';
import { copyToPostgres, type TableReport } from './copy-to-postgres';
import { createCopyProgress, type ProgressOutput } from './copy-progress';
import type { Config } from '../config/config';
import { createPool, migratePostgres } from '../backend/postgres/database';
import { createPostgresCheckpointer } from '../backend/postgres/graph-checkpoints';
import { migrate as migrateSqlite, openDatabase } from '../backend/sqlite/database';

export const DB_COMMANDS: { name: string; usage: string; about: string }[] = [
  {
    name: 'db migrate',
    usage: 'prism db migrate',
    about: 'apply pending migrations to PRISM_DATABASE_URL, or to the SQLite file',
  },
  {
    name: 'db copy',
    usage: 'prism db copy --to postgres://… [--schema NAME] [--blobs DIR|s3://…]',
    about: 'copy the SQLite install into PostgreSQL, verify counts and checksums; re-runnable',
  },
];

export class DbUsageError extends Error {}

export async function dbMigrate(config: Config): Promise<number> {
  const { url, schema } = config.database;
  if (!url) {
    const db = openDatabase(config.data.dbPath);
    try {
      console.log(`SQLite ${config.data.dbPath}: schema up to date (${migrateSqlite(db).length} applied now)`);
    } finally {
      db.close();
    }
    return 0;
  }
  const pool = createPool({ url, schema, max: 2 });
  try {
    const applied = await migratePostgres(pool, schema);
    await (await createPostgresCheckpointer(url, schema, 2)).end();
    console.log(`PostgreSQL schema ${schema}: ${applied.length > 0 ? `applied ${applied.join(', ')}` : 'up to date'}`);
    return 0;
  } finally {
    await pool.end();
  }
}

/** @param progressOut where the progress goes (a bar on a terminal, a line every few seconds otherwise). */
export async function dbCopy(
  config: Config,
  args: string[],
  progressOut: ProgressOutput = process.stderr,
): Promise<number> {
  let values: { to?: string | undefined; schema?: string | undefined; blobs?: string | undefined };
  try {
    ({ values } = parseArgs({
      args,
      options: { to: { type: 'string' }, schema: { type: 'string' }, blobs: { type: 'string' } },
      strict: true,
    }));
  } catch (error) {
    throw new DbUsageError((error as Error).message);
  }
  if (!values.to || !/^postgres(ql)?:\/\//.test(values.to)) throw new DbUsageError('--to postgres://… is required');
  const schema = values.schema ?? config.database.schema;
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new DbUsageError('--schema must be a lower-case SQL identifier');

  const source = openDatabase(config.data.dbPath);
  const pool = createPool({ url: values.to, schema, max: 2 });
  try {
    await migratePostgres(pool, schema);
    await (await createPostgresCheckpointer(values.to, schema, 2)).end();
    const blobs = values.blobs
      ? { from: createFsBlobStore(config.data.blobDir), to: openBlobStore(values.blobs, config) }
      : null;
    // On a terminal a table's line first clears the progress bar drawn on the current line.
    const clear = progressOut.isTTY ? '\r\u001b[K' : '';
    const started = Date.now();
    const report = await copyToPostgres(
      source,
      pool,
      blobs,
      (t: TableReport) =>
        console.error(
          `${clear}${t.table.padEnd(30)} ${String(t.source).padStart(8)} rows, ${String(t.copied).padStart(8)} copied now, ` +
            `${t.checksumMatches ? 'checksum ok' : `MISMATCH (target has ${t.target})`}`,
        ),
      (total) => createCopyProgress(total, progressOut),
    );
    if (report.blobs) {
      const b = report.blobs;
      console.error(
        `blobs: ${b.total}, ${b.copied} copied now, ${b.present} already there, ${b.mismatched.length} bad`,
      );
    } else {
      console.error(`blobs stay in ${config.data.blobDir} (pass --blobs to copy them elsewhere)`);
    }
    const rows = report.tables.reduce((sum, t) => sum + t.source, 0);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.log(
      report.ok ? `copied and verified ${rows} rows in ${seconds} s` : 'copy FAILED verification (see above)',
    );
    return report.ok ? 0 : 1;
  } finally {
    source.close();
    await pool.end();
  }
}
