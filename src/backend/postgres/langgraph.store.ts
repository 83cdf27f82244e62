/**
 * PostgreSQL LangGraphStore (mirrors the SQLite room's langgraph.store.ts): the LangGraph Platform API's
 * documents, oldest first within a parent (seq), scoped by organisation.
 */
import type pg from 'pg';
import { likePrefix, toLangGraphDoc, vectorBytes, type LangGraphDocRow } from '../../stores/rows/langgraph.rows';
import type { LangGraphStore } from '../../stores/types';
import { createPostgresCronStore } from './langgraph-crons.store';

export function createPostgresLangGraphStore(pool: pg.Pool): LangGraphStore {
  return {
    ...createPostgresCronStore(pool),
    async put(doc) {
      await pool.query(`DELETE FROM langgraph_docs WHERE expires_at IS NOT NULL AND expires_at <= now()`);
      await pool.query(
        `INSERT INTO langgraph_docs (org_id, kind, id, parent, body_json, vector, created_at, updated_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (org_id, kind, id) DO UPDATE SET parent = EXCLUDED.parent, body_json = EXCLUDED.body_json,
           vector = EXCLUDED.vector, updated_at = EXCLUDED.updated_at, expires_at = EXCLUDED.expires_at`,
        [
          doc.orgId,
          doc.kind,
          doc.id,
          doc.parent,
          JSON.stringify(doc.body),
          vectorBytes(doc.vector),
          doc.createdAt.toISOString(),
          doc.updatedAt.toISOString(),
          doc.expiresAt?.toISOString() ?? null,
        ],
      );
    },
    async get(orgId, kind, id) {
      const { rows } = await pool.query<LangGraphDocRow>(
        `SELECT * FROM langgraph_docs WHERE org_id = $1 AND kind = $2 AND id = $3
           AND (expires_at IS NULL OR expires_at > now())`,
        [orgId, kind, id],
      );
      return rows[0] ? toLangGraphDoc(rows[0]) : null;
    },
    async delete(orgId, kind, id) {
      const result = await pool.query(`DELETE FROM langgraph_docs WHERE org_id = $1 AND kind = $2 AND id = $3`, [
        orgId,
        kind,
        id,
      ]);
      return (result.rowCount ?? 0) > 0;
    },
    async deleteChildren(orgId, kind, parent) {
      await pool.query(`DELETE FROM langgraph_docs WHERE org_id = $1 AND kind = $2 AND parent = $3`, [
        orgId,
        kind,
        parent,
      ]);
    },
    async list(orgId, kind, where, now) {
      const params: unknown[] = [orgId, kind, now.toISOString()];
      let scope = '';
      if (where.parent !== undefined) {
        params.push(where.parent);
        scope = `AND parent = $4`;
      } else if (where.parentPrefix !== undefined && where.parentPrefix !== '') {
        params.push(where.parentPrefix, likePrefix(where.parentPrefix));
        scope = `AND (parent = $4 OR parent LIKE $5)`;
      }
      const { rows } = await pool.query<LangGraphDocRow>(
        `SELECT * FROM langgraph_docs WHERE org_id = $1 AND kind = $2 AND (expires_at IS NULL OR expires_at > $3)
           ${scope} ORDER BY seq`,
        params,
      );
      return rows.map(toLangGraphDoc);
    },
  };
}
