/**
 * SQLite FeedbackStore: human feedback on a request, an agent execution or a chat, scoped by organisation.
 */
import type { FeedbackStore } from '../../stores/types';
import type { SqliteDatabase } from './database';
import { type FeedbackRow, toFeedback } from '../../stores/rows/feedback.rows';

export function createSqliteFeedbackStore(db: SqliteDatabase): FeedbackStore {
  const insert = db.prepare(
    `INSERT INTO feedback (id, org_id, entity_type, entity_id, response_json, notes, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const page = db.prepare<[string, string, string, number, number], FeedbackRow>(
    `SELECT * FROM feedback WHERE org_id = ? AND entity_type = ? AND entity_id = ?
      ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`,
  );
  return {
    async insert(record) {
      insert.run(
        record.id,
        record.orgId,
        record.entityType,
        record.entityId,
        record.response === null ? null : JSON.stringify(record.response),
        record.notes,
        record.createdAt.toISOString(),
      );
      return record;
    },
    async list(orgId, entity, { limit, offset }) {
      return page.all(orgId, entity.type, entity.id, limit, offset).map(toFeedback);
    },
  };
}
