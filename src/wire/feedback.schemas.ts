/**
 * Wire shapes of feedback: the submit body (current SDKs send all three ids with two of them null; the legacy
 * experimental route sends `request_id` and a `flag`) and the list response.
 */
import { z } from 'zod';
import type { FeedbackRecord } from '../domain/feedback';
import { queryInt } from './common.schemas';

export const feedbackSubmitBodySchema = z.object({
  request_id: z.string().min(1).nullish(),
  agent_execution_id: z.string().min(1).nullish(),
  chat_id: z.string().min(1).nullish(),
  response: z.record(z.string(), z.unknown()).nullish(),
  notes: z.string().nullish(),
  flag: z.boolean().nullish(),
});

export const feedbackListQuerySchema = z.object({
  type: z.enum(['request', 'agent_execution', 'chat']).default('request'),
  limit: queryInt({ min: 1, max: 1000, default: 10 }),
  offset: queryInt({ min: 0, default: 0 }),
});

export const feedbackEntityParamsSchema = z.object({ entity_id: z.string().min(1).max(200) });

const ID_FIELD = { request: 'request_id', agent_execution: 'agent_execution_id', chat: 'chat_id' } as const;

export function toFeedbackWire(f: FeedbackRecord) {
  return {
    id: f.id,
    request_id: f.entityType === 'request' ? f.entityId : null,
    agent_execution_id: f.entityType === 'agent_execution' ? f.entityId : null,
    chat_id: f.entityType === 'chat' ? f.entityId : null,
    created_at: f.createdAt.toISOString(),
    response: f.response,
    notes: f.notes,
  };
}

export function toFeedbackListWire(type: FeedbackRecord['entityType'], id: string, items: FeedbackRecord[]) {
  return { [ID_FIELD[type]]: id, items: items.map(toFeedbackWire) };
}
