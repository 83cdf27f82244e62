/**
 * SQLite LangGraphStore: the LangGraph Platform API's threads, checkpoints, runs and store items as documents
 * (migration 015), scoped by organisation; rows come back oldest first (rowid) within a parent.
 */
import type { LangGraphStore } from '../../stores/types';
import type { SqliteDatabase } from './database';
import { createSqliteCronStore } from './langgraph-crons.store';
import { type LangGraphDocRow, vectorBytes, toLangGraphDoc, likePrefix } from '../../stores/rows/langgraph.rows';

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
