/**
 * SQLite FileStore: file records and the blob references they hold.
 *
 * A file row and its `blobs` row are written in one transaction after the bytes are safely on disk, so a crash
 * can leave an unreferenced blob (swept at start) but never a record without its bytes.
 */
import { randomUUID } from 'node:crypto';

import type { FileStore, NewFile, StoredBytes } from '../../stores/types';
import { createBlobRecorder } from './blob-rows';
import type { SqliteDatabase } from './database';
import { type FileRow, toFile } from '../../stores/rows/files.rows';

export function createSqliteFileStore(db: SqliteDatabase): FileStore {
  const recordBlob = createBlobRecorder(db);
  const insertFile = db.prepare<
    [string, string, string, string, string, number, string, string | null, string | null, string, string | null],
    FileRow
  >(
    `INSERT INTO files (id, org_id, filename, purpose, status, bytes, content_type, md5, sha256, created_at,
                        upload_expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
  );
  const complete = db.prepare<[number, string, string, string, string], FileRow>(
    `UPDATE files SET status = 'uploaded', bytes = ?, md5 = ?, sha256 = ?, upload_expires_at = NULL
      WHERE org_id = ? AND id = ? AND status = 'pending' RETURNING *`,
  );
  const byId = db.prepare<[string, string], FileRow>('SELECT * FROM files WHERE org_id = ? AND id = ?');
  const bySignedId = db.prepare<[string], FileRow>('SELECT * FROM files WHERE id = ?');
  const page = db.prepare<[string, number, number], FileRow>(
    `SELECT * FROM files WHERE org_id = ? AND status = 'uploaded'
      ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`,
  );
  const pageAfter = db.prepare<{ org: string; after: string; limit: number; skip: number }, FileRow>(
    `SELECT f.* FROM files f, files a
      WHERE f.org_id = @org AND f.status = 'uploaded' AND a.org_id = @org AND a.id = @after
        AND (f.created_at < a.created_at OR (f.created_at = a.created_at AND f.rowid < a.rowid))
      ORDER BY f.created_at DESC, f.rowid DESC LIMIT @limit OFFSET @skip`,
  );
  const byMd5 = db.prepare<[string, string], FileRow>(
    `SELECT * FROM files WHERE org_id = ? AND md5 = ? AND status = 'uploaded' ORDER BY created_at DESC, rowid DESC LIMIT 1`,
  );
  const deleteRow = db.prepare<[string, string], FileRow>('DELETE FROM files WHERE org_id = ? AND id = ? RETURNING *');
  // A blob stays while any file, prediction input, skill version or artifact refers to it.
  const blobInUse = db.prepare<{ sha: string }, { n: number }>(
    `SELECT (SELECT COUNT(*) FROM files WHERE sha256 = @sha)
          + (SELECT COUNT(*) FROM prediction_inputs WHERE sha256 = @sha)
          + (SELECT COUNT(*) FROM skills WHERE content_hash = @sha)
          + (SELECT COUNT(*) FROM artifacts WHERE sha256 = @sha) AS n`,
  );
  const deleteBlob = db.prepare('DELETE FROM blobs WHERE sha256 = ?');
  const deleteExpired = db.prepare(`DELETE FROM files WHERE status = 'pending' AND upload_expires_at < ?`);
  const allBlobs = db.prepare<[], { sha256: string }>('SELECT sha256 FROM blobs');
  const guestBefore = db.prepare<[string, number], FileRow>(
    `SELECT f.* FROM files f JOIN organisations o ON o.id = f.org_id
      WHERE o.kind = 'guest' AND f.created_at < ? ORDER BY f.created_at, f.rowid LIMIT ?`,
  );

  const insertUploadedTx = db.transaction((file: NewFile, content: StoredBytes): FileRow => {
    const now = new Date().toISOString();
    recordBlob(content, now);
    const row = insertFile.get(
      randomUUID(),
      file.orgId,
      file.filename,
      file.purpose,
      'uploaded',
      content.bytes,
      file.contentType,
      content.md5,
      content.sha256,
      now,
      null,
    );
    if (!row) throw new Error('file insert returned no row');
    return row;
  });

  const completeTx = db.transaction((orgId: string, fileId: string, content: StoredBytes): FileRow | undefined => {
    recordBlob(content, new Date().toISOString());
    const row = complete.get(content.bytes, content.md5, content.sha256, orgId, fileId);
    if (!row) releaseBlob(content.sha256);
    return row;
  });

  const deleteTx = db.transaction((orgId: string, fileId: string) => {
    const row = deleteRow.get(orgId, fileId);
    if (!row) return null;
    const blobUnreferenced = row.sha256 ? releaseBlob(row.sha256) : false;
    return { file: toFile(row), blobUnreferenced };
  });

  /** Drops the blob row when no file refers to it any more; true when it was dropped. */
  function releaseBlob(sha256: string): boolean {
    if ((blobInUse.get({ sha: sha256 })?.n ?? 0) > 0) return false;
    deleteBlob.run(sha256);
    return true;
  }

  return {
    async insertUploaded(file, content) {
      return toFile(insertUploadedTx(file, content));
    },
    async insertPending(file, uploadExpiresAt) {
      const row = insertFile.get(
        randomUUID(),
        file.orgId,
        file.filename,
        file.purpose,
        'pending',
        0,
        file.contentType,
        null,
        null,
        new Date().toISOString(),
        uploadExpiresAt.toISOString(),
      );
      if (!row) throw new Error('file insert returned no row');
      return toFile(row);
    },
    async completePending(orgId, fileId, content) {
      const row = completeTx(orgId, fileId, content);
      return row ? toFile(row) : null;
    },
    async get(orgId, fileId) {
      const row = byId.get(orgId, fileId);
      return row ? toFile(row) : null;
    },
    async getBySignedId(fileId) {
      const row = bySignedId.get(fileId);
      return row ? toFile(row) : null;
    },
    async list(orgId, { skip, limit, after }) {
      const rows = after ? pageAfter.all({ org: orgId, after, limit, skip }) : page.all(orgId, limit, skip);
      return rows.map(toFile);
    },
    async findByMd5(orgId, md5) {
      const row = byMd5.get(orgId, md5);
      return row ? toFile(row) : null;
    },
    async delete(orgId, fileId) {
      return deleteTx(orgId, fileId);
    },
    async deleteExpiredPending(now) {
      return deleteExpired.run(now.toISOString()).changes;
    },
    async guestFilesBefore(cutoff, limit) {
      return guestBefore.all(cutoff.toISOString(), limit).map(toFile);
    },
    async referencedBlobs() {
      return new Set(allBlobs.all().map((r) => r.sha256));
    },
  };
}
