/**
 * PostgreSQL FileStore: file records and the blob references they hold; a file row and its `blobs` row are written
 * in one transaction after the bytes are safely stored.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { toFile, type FileRow } from '../../stores/rows/files.rows';
import type { FileStore, NewFile, StoredBytes } from '../../stores/types';
import { recordBlob, releaseBlob } from './blob-rows';
import { withTransaction, type Queryable } from './database';

const INSERT = `INSERT INTO files (id, org_id, filename, purpose, status, bytes, content_type, md5, sha256, created_at,
                   upload_expires_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`;

async function insertRow(
  db: Queryable,
  file: NewFile,
  status: 'pending' | 'uploaded',
  content: StoredBytes | null,
  at: string,
  expiresAt: string | null,
): Promise<FileRow> {
  const { rows } = await db.query<FileRow>(INSERT, [
    randomUUID(),
    file.orgId,
    file.filename,
    file.purpose,
    status,
    content?.bytes ?? 0,
    file.contentType,
    content?.md5 ?? null,
    content?.sha256 ?? null,
    at,
    expiresAt,
  ]);
  const row = rows[0];
  if (!row) throw new Error('file insert returned no row');
  return row;
}

export function createPostgresFileStore(pool: pg.Pool): FileStore {
  const rows = async (sql: string, params: unknown[]): Promise<FileRow[]> =>
    (await pool.query<FileRow>(sql, params)).rows;

  return {
    async insertUploaded(file, content) {
      const at = new Date().toISOString();
      return toFile(
        await withTransaction(pool, async (client) => {
          await recordBlob(client, content, at);
          return insertRow(client, file, 'uploaded', content, at, null);
        }),
      );
    },
    async insertPending(file, uploadExpiresAt) {
      return toFile(
        await insertRow(pool, file, 'pending', null, new Date().toISOString(), uploadExpiresAt.toISOString()),
      );
    },
    async completePending(orgId, fileId, content) {
      const row = await withTransaction(pool, async (client) => {
        await recordBlob(client, content, new Date().toISOString());
        const { rows: done } = await client.query<FileRow>(
          `UPDATE files SET status = 'uploaded', bytes = $1, md5 = $2, sha256 = $3, upload_expires_at = NULL
            WHERE org_id = $4 AND id = $5 AND status = 'pending' RETURNING *`,
          [content.bytes, content.md5, content.sha256, orgId, fileId],
        );
        if (!done[0]) await releaseBlob(client, content.sha256);
        return done[0];
      });
      return row ? toFile(row) : null;
    },
    async get(orgId, fileId) {
      const [row] = await rows('SELECT * FROM files WHERE org_id = $1 AND id = $2', [orgId, fileId]);
      return row ? toFile(row) : null;
    },
    async getBySignedId(fileId) {
      const [row] = await rows('SELECT * FROM files WHERE id = $1', [fileId]);
      return row ? toFile(row) : null;
    },
    async list(orgId, { skip, limit, after }) {
      const page = after
        ? await rows(
            // The cursor row's place is a scalar subquery, so the row comparison is an index condition (the
            // scan starts at the cursor); a join to it filtered every newer row first (deep pages read the list).
            `SELECT * FROM files
              WHERE org_id = $1 AND status = 'uploaded'
                AND (created_at, seq) < (SELECT a.created_at, a.seq FROM files a WHERE a.org_id = $1 AND a.id = $2)
              ORDER BY created_at DESC, seq DESC LIMIT $3 OFFSET $4`,
            [orgId, after, limit, skip],
          )
        : await rows(
            `SELECT * FROM files WHERE org_id = $1 AND status = 'uploaded'
              ORDER BY created_at DESC, seq DESC LIMIT $2 OFFSET $3`,
            [orgId, limit, skip],
          );
      return page.map(toFile);
    },
    async findByMd5(orgId, md5) {
      const [row] = await rows(
        `SELECT * FROM files WHERE org_id = $1 AND md5 = $2 AND status = 'uploaded'
          ORDER BY created_at DESC, seq DESC LIMIT 1`,
        [orgId, md5],
      );
      return row ? toFile(row) : null;
    },
    async delete(orgId, fileId) {
      return withTransaction(pool, async (client) => {
        const { rows: gone } = await client.query<FileRow>(
          'DELETE FROM files WHERE org_id = $1 AND id = $2 RETURNING *',
          [orgId, fileId],
        );
        const row = gone[0];
        if (!row) return null;
        const blobUnreferenced = row.sha256 ? await releaseBlob(client, row.sha256) : false;
        return { file: toFile(row), blobUnreferenced };
      });
    },
    async deleteExpiredPending(now) {
      const { rowCount } = await pool.query(`DELETE FROM files WHERE status = 'pending' AND upload_expires_at < $1`, [
        now.toISOString(),
      ]);
      return rowCount ?? 0;
    },
    async guestFilesBefore(cutoff, limit) {
      return (
        await rows(
          `SELECT f.* FROM files f JOIN organisations o ON o.id = f.org_id
            WHERE o.kind = 'guest' AND f.created_at < $1 ORDER BY f.created_at, f.seq LIMIT $2`,
          [cutoff.toISOString(), limit],
        )
      ).map(toFile);
    },
    async referencedBlobs() {
      return new Set((await pool.query<{ sha256: string }>('SELECT sha256 FROM blobs')).rows.map((r) => r.sha256));
    },
  };
}
