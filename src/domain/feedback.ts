/**
 * Feedback on a prediction, an agent execution or a chat: the record the feedback store keeps and the wire mapper
 * renders (so the HTTP layer reads it from the domain, not from the stores).
 */

export type FeedbackEntityType = 'request' | 'agent_execution' | 'chat';

export interface FeedbackRecord {
  id: string;
  orgId: string;
  entityType: FeedbackEntityType;
  entityId: string;
  response: Record<string, unknown> | null;
  notes: string | null;
  createdAt: Date;
}
