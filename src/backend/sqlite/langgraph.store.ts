/**
 * SQLite LangGraphStore: the LangGraph Platform API's threads, checkpoints, runs and store items as documents
 * (migration 015), scoped by organisation; rows come back oldest first (rowid) within a parent.
 */
import type { LangGraphDoc, LangGraphDocKind, LangGraphStore } from '../../stores/types';
import type { SqliteDatabase } from './database';
import { createSqliteCronStore } from './langgraph-crons.store';

export interface LangGraphDocRow {
  org_id: string;
  kind: LangGraphDocKind;
  id: string;
  parent: string;
  body_json: string | Record<string, unknown>;
  vector: Buffer | null;
  created_at: string | Date;
  updated_at: string | Date;
  expires_at: string | Date | null;
}

export const vectorBytes = (vector: Float32Array | null): Buffer | null =>
  vector === null ? null : Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);

export const toLangGraphDoc = (r: LangGraphDocRow): LangGraphDoc => ({
  orgId: r.org_id,
  kind: r.kind,
  id: r.id,
  parent: r.parent,
  body: typeof r.body_json === 'string' ? (JSON.parse(r.body_json) as Record<string, unknown>) : r.body_json,
  vector:
    r.vector === null ? null : new Float32Array(new Uint8Array(r.vector).buffer, 0, Math.floor(r.vector.length / 4)),
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
  expiresAt: r.expires_at === null ? null : new Date(r.expires_at),
});

/** `%` and `_` in a namespace are literal in a LIKE prefix. */
export const likePrefix = (prefix: string): string => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}.%`;

export function createSqliteLangGraphStore(db: SqliteDatabase): LangGraphStore {
  const upsert = db.prepare(
    `INSERT INTO langgraph_docs (org_id, kind, id, parent, body_json, vector, created_at, updated_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (org_id, kind, id) DO UPDATE SET parent = excluded.parent, body_json = excluded.body_json,
       vector = excluded.vector, updated_at = excluded.updated_at, expires_at = excluded.expires_at`,
  );
  const one = db.prepare<[string, string, string, string], LangGraphDocRow>(
    `SELECT * FROM langgraph_docs WHERE org_id = ? AND kind = ? AND id = ? AND (expires_at IS NULL OR expires_at > ?)`,
  );
  const remove = db.prepare(`DELETE FROM langgraph_docs WHERE org_id = ? AND kind = ? AND id = ?`);
  const removeChildren = db.prepare(`DELETE FROM langgraph_docs WHERE org_id = ? AND kind = ? AND parent = ?`);
  const removeExpired = db.prepare(`DELETE FROM langgraph_docs WHERE expires_at IS NOT NULL AND expires_at <= ?`);
  const all = db.prepare<[string, string, string], LangGraphDocRow>(
    `SELECT * FROM langgraph_docs WHERE org_id = ? AND kind = ? AND (expires_at IS NULL OR expires_at > ?)
      ORDER BY rowid`,
  );
  const byParent = db.prepare<[string, string, string, string], LangGraphDocRow>(
    `SELECT * FROM langgraph_docs WHERE org_id = ? AND kind = ? AND parent = ?
       AND (expires_at IS NULL OR expires_at > ?) ORDER BY rowid`,
  );
  const byPrefix = db.prepare<[string, string, string, string, string], LangGraphDocRow>(
    `SELECT * FROM langgraph_docs WHERE org_id = ? AND kind = ? AND (parent = ? OR parent LIKE ? ESCAPE '\\')
       AND (expires_at IS NULL OR expires_at > ?) ORDER BY rowid`,
  );
  return {
    ...createSqliteCronStore(db),
    async put(doc) {
      removeExpired.run(new Date().toISOString());
      upsert.run(
        doc.orgId,
        doc.kind,
        doc.id,
        doc.parent,
        JSON.stringify(doc.body),
        vectorBytes(doc.vector),
        doc.createdAt.toISOString(),
        doc.updatedAt.toISOString(),
        doc.expiresAt?.toISOString() ?? null,
      );
    },
    async get(orgId, kind, id) {
      const row = one.get(orgId, kind, id, new Date().toISOString());
      return row ? toLangGraphDoc(row) : null;
    },
    async delete(orgId, kind, id) {
      return remove.run(orgId, kind, id).changes > 0;
    },
    async deleteChildren(orgId, kind, parent) {
      removeChildren.run(orgId, kind, parent);
    },
    async list(orgId, kind, where, now) {
      const at = now.toISOString();
      const rows =
        where.parent !== undefined
          ? byParent.all(orgId, kind, where.parent, at)
          : where.parentPrefix !== undefined && where.parentPrefix !== ''
            ? byPrefix.all(orgId, kind, where.parentPrefix, likePrefix(where.parentPrefix), at)
            : all.all(orgId, kind, at);
      return rows.map(toLangGraphDoc);
    },
  };
}
