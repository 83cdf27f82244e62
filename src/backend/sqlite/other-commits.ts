/**
 * Notices commits made by other connections to the same file (the CLI revoking a key or crediting a wallet while
 * the server runs), for stores that keep answers in memory: SQLite's `PRAGMA data_version` changes only when
 * another connection commits, never for this connection's own writes.
 *
 * The pragma is one SQLite call, and a gateway call asked it three times (the key cache, the wallet before and
 * after the call): a few percent of the gateway's CPU. Every watcher of a connection now shares one reading per
 * event-loop turn, so under load many calls share one. A commit by another process is still seen, at the latest
 * on the next turn — the same as a commit that lands just after the check.
 */
import type { SqliteDatabase } from './database';

/** Per connection: its `data_version`, read at most once per event-loop turn however many watchers ask. */
const versionReaders = new WeakMap<SqliteDatabase, () => number>();

function sharedDataVersion(db: SqliteDatabase): () => number {
  const existing = versionReaders.get(db);
  if (existing) return existing;
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  let current: number | null = null;
  const forget = (): void => {
    current = null;
  };
  const read = (): number => {
    if (current === null) {
      current = dataVersion.get() as number;
      // Cleared when this turn's I/O callbacks and their promise continuations are done.
      setImmediate(forget);
    }
    return current;
  };
  versionReaders.set(db, read);
  return read;
}

/** Returns a check that is true once after each commit by another connection, counted from this call. */
export function watchOtherCommits(db: SqliteDatabase): () => boolean {
  const dataVersion = sharedDataVersion(db);
  let seen = dataVersion();
  return () => {
    const version = dataVersion();
    if (version === seen) return false;
    seen = version;
    return true;
  };
}
