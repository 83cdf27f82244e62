/**
 * Creates the PostgreSQL database a URL names when it does not exist yet (CI's test database), connecting to the
 * server's `postgres` database to do it.
 * Usage: node --import tsx scripts/ensure-database.ts postgres://user@host:port/name
 */
import pg from 'pg';

async function ensureDatabase(url: string): Promise<void> {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) throw new Error(`not a plain database name: ${name}`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount === 0) await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
}

ensureDatabase(process.argv[2] ?? '').catch((error: unknown) => {
  console.error(`ensure-database: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
