/**
 * The feedback tables' rows as both SQL dialects answer them, and their mapping to domain records: written once,
 * imported by the SQLite and the PostgreSQL stores alike, so neither backend imports the other.
 */
import type { FeedbackRecord } from '../types';

export interface FeedbackRow {
  id: string;
  org_id: string;
  entity_type: FeedbackRecord['entityType'];
  entity_id: string;
  response_json: string | null;
  notes: string | null;
  created_at: string;
}

export const toFeedback = (r: FeedbackRow): FeedbackRecord => ({
  id: r.id,
  orgId: r.org_id,
  entityType: r.entity_type,
  entityId: r.entity_id,
  response: r.response_json === null ? null : (JSON.parse(r.response_json) as Record<string, unknown>),
  notes: r.notes,
  createdAt: new Date(r.created_at),
});
