/**
 * PostgreSQL FeedbackStore: feedback on predictions, executions and chats, read newest first per entity.
 */
import type pg from 'pg';
import { toFeedback, type FeedbackRow } from '../../stores/rows/feedback.rows';
import type { FeedbackStore } from '../../stores/types';
import { jsonOrNull } from './status-update';

export function createPostgresFeedbackStore(pool: pg.Pool): FeedbackStore {
  return {
    async insert(record) {
      await pool.query(
        `INSERT INTO feedback (id, org_id, entity_type, entity_id, response_json, notes, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [
          record.id,
          record.orgId,
          record.entityType,
          record.entityId,
          jsonOrNull(record.response),
          record.notes,
          record.createdAt.toISOString(),
        ],
      );
      return record;
    },
    async list(orgId, entity, { limit, offset }) {
      const { rows } = await pool.query<FeedbackRow>(
        `SELECT * FROM feedback WHERE org_id = $1 AND entity_type = $2 AND entity_id = $3
          ORDER BY created_at DESC, seq DESC LIMIT $4 OFFSET $5`,
        [orgId, entity.type, entity.id, limit, offset],
      );
      return rows.map(toFeedback);
    },
  };
}
