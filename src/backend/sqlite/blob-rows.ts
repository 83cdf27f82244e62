/**
 * The `blobs` table rows every record type writes when it refers to stored bytes (files, prediction inputs): one
 * statement, so the start-up sweep and the reference counting see blobs recorded the same way.
 */
import type { StoredBytes } from '../../stores/types';
import type { SqliteDatabase } from './database';

/** Records a blob (idempotent: a known hash is left as it is). Call inside the writer's transaction. */
export function createBlobRecorder(db: SqliteDatabase): (content: StoredBytes, at: string) => void {
  const insert = db.prepare(
    'INSERT INTO blobs (sha256, bytes, md5, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (sha256) DO NOTHING',
  );
  return (content, at) => {
    insert.run(content.sha256, content.bytes, content.md5, at);
  };
}
