/**
 * Opens the SQLite database and brings its schema up to date.
 *
 * WAL lets readers run beside the one writer; foreign keys are on so deletes cascade and references hold;
 * numbered `.sql` migrations in `migrations/` run once each, in order, each in its own transaction.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';

export type SqliteDatabase = Database.Database;

const MIGRATIONS_DIR = path.join(__dirname, 'migrations');

/** Opens (creating if needed) the database at `file` and applies pending migrations. */
export function openDatabase(file: string): SqliteDatabase {
  if (file !== ':memory:') {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    // The database holds key hashes, wallets and callers' data: owner-only, like the key files. Created empty
    // with mode 0600 first so it is never readable by others, even for a moment; an existing one is tightened.
    fs.closeSync(fs.openSync(file, 'a', 0o600));
    fs.chmodSync(file, 0o600);
  }
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  db.pragma('synchronous = NORMAL');
  migrate(db);
  if (file !== ':memory:') {
    for (const side of [`${file}-wal`, `${file}-shm`]) if (fs.existsSync(side)) fs.chmodSync(side, 0o600);
  }
  return db;
}

/** Applies every migration file not yet recorded in `schema_migrations`. */
export function migrate(db: SqliteDatabase, dir = MIGRATIONS_DIR): number[] {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
  const applied = new Set(
    db
      .prepare<[], { version: number }>('SELECT version FROM schema_migrations')
      .all()
      .map((r) => r.version),
  );
  const pending = fs
    .readdirSync(dir)
    .map((name) => ({ name, version: Number(/^(\d+)_.*\.sql$/.exec(name)?.[1]) }))
    .filter((m) => Number.isInteger(m.version) && !applied.has(m.version))
    .sort((a, b) => a.version - b.version);
  const record = db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)');
  for (const migration of pending) {
    const sql = fs.readFileSync(path.join(dir, migration.name), 'utf8');
    db.transaction(() => {
      db.exec(sql);
      record.run(migration.version, new Date().toISOString());
    })();
  }
  return pending.map((m) => m.version);
}
