/**
 * PostgreSQL ArtifactStore: artifact rows and, in the same transaction, the blob row of their bytes. Every read is
 * scoped by organisation and by an execution or a session.
 */
import type pg from 'pg';
import { toArtifact, type ArtifactRow } from '../../stores/rows/artifacts.rows';
import type { ArtifactScope, ArtifactStore } from '../../stores/types/artifact';
import { recordBlob } from './blob-rows';
import { withTransaction } from './database';

/** $1 org, $2 execution id or null, $3 session id or null: one statement serves every scope. */
const SCOPE = `org_id = $1 AND ($2::text IS NULL OR execution_id = $2) AND ($3::text IS NULL OR session_id = $3)
  AND ($2::text IS NOT NULL OR $3::text IS NOT NULL)`;

const scoped = (orgId: string, scope: ArtifactScope): unknown[] => [
  orgId,
  scope.executionId ?? null,
  scope.sessionId ?? null,
];

export function createPostgresArtifactStore(pool: pg.Pool): ArtifactStore {
  return {
    async insert(a, content) {
      return withTransaction(pool, async (client) => {
        const at = a.createdAt.toISOString();
        await recordBlob(client, content, at);
        const { rowCount } = await client.query(
          `INSERT INTO artifacts (object_id, org_id, execution_id, session_id, kind, filename, mime_type, sha256,
                                  size_bytes, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (object_id) DO NOTHING`,
          [a.objectId, a.orgId, a.executionId, a.sessionId, a.kind, a.filename, a.mimeType, a.sha256, a.sizeBytes, at],
        );
        return rowCount === 1;
      });
    },
    async get(orgId, objectId) {
      const row = (
        await pool.query<ArtifactRow>('SELECT * FROM artifacts WHERE org_id = $1 AND object_id = $2', [orgId, objectId])
      ).rows[0];
      return row ? toArtifact(row) : null;
    },
    async findByFilename(orgId, scope, filename) {
      const row = (
        await pool.query<ArtifactRow>(
          `SELECT * FROM artifacts WHERE ${SCOPE} AND filename = $4 ORDER BY created_at DESC, seq DESC LIMIT 1`,
          [...scoped(orgId, scope), filename],
        )
      ).rows[0];
      return row ? toArtifact(row) : null;
    },
    async list(orgId, scope, { offset, limit }) {
      const { rows } = await pool.query<ArtifactRow>(
        `SELECT * FROM artifacts WHERE ${SCOPE} ORDER BY created_at, seq LIMIT $4 OFFSET $5`,
        [...scoped(orgId, scope), limit, offset],
      );
      return rows.map(toArtifact);
    },
    async count(orgId, scope) {
      const { rows } = await pool.query<{ n: number }>(
        `SELECT COUNT(*) AS n FROM artifacts WHERE ${SCOPE}`,
        scoped(orgId, scope),
      );
      return rows[0]?.n ?? 0;
    },
  };
}
