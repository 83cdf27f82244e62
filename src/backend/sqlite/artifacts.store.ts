/**
 * SQLite ArtifactStore. Lists are filtered by execution id, session id or both; an empty scope lists nothing
 * (the service always names one).
 */
import type { ArtifactRecord } from '../../domain/artifact';
import type { ArtifactScope, ArtifactStore } from '../../stores/types/artifact';
import { createBlobRecorder } from './blob-rows';
import type { SqliteDatabase } from './database';
import { type ArtifactRow, toArtifact } from '../../stores/rows/artifacts.rows';

// `@e IS NULL OR execution_id = @e`: one prepared statement serves every scope.
const SCOPE =
  '(@e IS NULL OR execution_id = @e) AND (@s IS NULL OR session_id = @s) AND (@e IS NOT NULL OR @s IS NOT NULL)';

export function createSqliteArtifactStore(db: SqliteDatabase): ArtifactStore {
  const recordBlob = createBlobRecorder(db);
  const insertRow = db.prepare(
    `INSERT INTO artifacts (object_id, org_id, execution_id, session_id, kind, filename, mime_type, sha256, size_bytes,
                            created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (object_id) DO NOTHING`,
  );
  const byId = db.prepare<[string, string], ArtifactRow>('SELECT * FROM artifacts WHERE org_id = ? AND object_id = ?');
  const byName = db.prepare<{ o: string; e: string | null; s: string | null; f: string }, ArtifactRow>(
    `SELECT * FROM artifacts WHERE org_id = @o AND ${SCOPE} AND filename = @f ORDER BY created_at DESC, rowid DESC LIMIT 1`,
  );
  const page = db.prepare<
    { o: string; e: string | null; s: string | null; limit: number; offset: number },
    ArtifactRow
  >(`SELECT * FROM artifacts WHERE org_id = @o AND ${SCOPE} ORDER BY created_at, rowid LIMIT @limit OFFSET @offset`);
  const counter = db.prepare<{ o: string; e: string | null; s: string | null }, { n: number }>(
    `SELECT COUNT(*) AS n FROM artifacts WHERE org_id = @o AND ${SCOPE}`,
  );
  const insertTx = db.transaction((a: ArtifactRecord, content: Parameters<ArtifactStore['insert']>[1]) => {
    const at = a.createdAt.toISOString();
    recordBlob(content, at);
    const { changes } = insertRow.run(
      a.objectId,
      a.orgId,
      a.executionId,
      a.sessionId,
      a.kind,
      a.filename,
      a.mimeType,
      a.sha256,
      a.sizeBytes,
      at,
    );
    return changes === 1;
  });
  const scoped = (orgId: string, scope: ArtifactScope) => ({
    o: orgId,
    e: scope.executionId ?? null,
    s: scope.sessionId ?? null,
  });

  return {
    async insert(artifact, content) {
      return insertTx(artifact, content);
    },
    async get(orgId, objectId) {
      const row = byId.get(orgId, objectId);
      return row ? toArtifact(row) : null;
    },
    async findByFilename(orgId, scope, filename) {
      const row = byName.get({ ...scoped(orgId, scope), f: filename });
      return row ? toArtifact(row) : null;
    },
    async list(orgId, scope, { offset, limit }) {
      return page.all({ ...scoped(orgId, scope), limit, offset }).map(toArtifact);
    },
    async count(orgId, scope) {
      return counter.get(scoped(orgId, scope))?.n ?? 0;
    },
  };
}
