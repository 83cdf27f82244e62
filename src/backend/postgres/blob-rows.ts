/**
 * The `blobs` rows every record type writes when it refers to stored bytes, and the reference count the file store
 * checks before it lets a blob go (the PostgreSQL twin of the SQLite room's blob-rows.ts).
 */
import type { StoredBytes } from '../../stores/types';
import type { Queryable } from './database';

/** Records a blob (idempotent: a known hash is left as it is). Call inside the writer's transaction. */
export async function recordBlob(db: Queryable, content: StoredBytes, at: string): Promise<void> {
  await db.query(
    'INSERT INTO blobs (sha256, bytes, md5, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (sha256) DO NOTHING',
    [content.sha256, content.bytes, content.md5, at],
  );
}

/** Drops the blob row when no record refers to it any more; true when it was dropped. */
export async function releaseBlob(db: Queryable, sha256: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `DELETE FROM blobs b WHERE b.sha256 = $1
        AND NOT EXISTS (SELECT 1 FROM files WHERE sha256 = $1)
        AND NOT EXISTS (SELECT 1 FROM prediction_inputs WHERE sha256 = $1)
        AND NOT EXISTS (SELECT 1 FROM skills WHERE content_hash = $1)
        AND NOT EXISTS (SELECT 1 FROM artifacts WHERE sha256 = $1)`,
    [sha256],
  );
  return (rowCount ?? 0) > 0;
}
