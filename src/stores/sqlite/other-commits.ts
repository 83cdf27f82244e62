/**
 * Notices commits made by other connections to the same file (the CLI revoking a key or crediting a wallet while
 * the server runs), for stores that keep answers in memory: SQLite's `PRAGMA data_version` changes only when
 * another connection commits, never for this connection's own writes.
 */
import type { SqliteDatabase } from './database';

/** Returns a check that is true once after each commit by another connection, counted from this call. */
export function watchOtherCommits(db: SqliteDatabase): () => boolean {
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  let seen = dataVersion.get();
  return () => {
    const version = dataVersion.get();
    if (version === seen) return false;
    seen = version;
    return true;
  };
}
