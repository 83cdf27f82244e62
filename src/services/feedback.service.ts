/**
 * Feedback: corrections and notes a caller attaches to one of its requests (predictions), agent executions or
 * chats. Exactly one target id per submission, and at least a response or notes; reads are org-scoped. A target
 * the caller cannot see is absent for both: submitting and listing answer the same 404 (`prediction_not_found`,
 * `execution_not_found`, `chat_not_found`).
 */
import { randomUUID } from 'node:crypto';
import type { Principal } from '../domain/account';
import { BadRequestError, NotFoundError } from '../domain/errors';
import type { FeedbackEntityType, FeedbackRecord, FeedbackStore } from '../stores/types';

export interface FeedbackSubmission {
  requestId: string | null;
  agentExecutionId: string | null;
  chatId: string | null;
  response: Record<string, unknown> | null;
  notes: string | null;
}

export interface FeedbackServiceDeps {
  store: FeedbackStore;
  orgIdFor: (principal: Principal) => Promise<string>;
  /**
   * Whether the caller may see the target: a prediction or execution of its organisation, or a chat it may read
   * (`GET /v1/chat/messages` answers it).
   */
  targetExists: (principal: Principal, orgId: string, type: FeedbackEntityType, id: string) => Promise<boolean>;
}

export interface FeedbackService {
  submit(principal: Principal, submission: FeedbackSubmission): Promise<FeedbackRecord>;
  /** @throws NotFoundError when the target does not exist for the caller, as `submit` does. */
  list(
    principal: Principal,
    entity: { type: FeedbackEntityType; id: string },
    page: { limit: number; offset: number },
  ): Promise<FeedbackRecord[]>;
}

const NOT_FOUND_BY_TYPE = { request: 'prediction', agent_execution: 'execution', chat: 'chat' } as const;

export function createFeedbackService(deps: FeedbackServiceDeps): FeedbackService {
  async function checkTarget(principal: Principal, orgId: string, type: FeedbackEntityType, id: string) {
    if (!(await deps.targetExists(principal, orgId, type, id))) throw new NotFoundError(NOT_FOUND_BY_TYPE[type], id);
  }

  return {
    async submit(principal, s) {
      const targets: [FeedbackEntityType, string | null][] = [
        ['request', s.requestId],
        ['agent_execution', s.agentExecutionId],
        ['chat', s.chatId],
      ];
      const given = targets.filter(([, id]) => id !== null && id !== '');
      const [target] = given;
      if (given.length !== 1 || !target) {
        throw new BadRequestError('Send exactly one of request_id, agent_execution_id or chat_id.', null, 'request_id');
      }
      if (s.response === null && (s.notes === null || s.notes.trim() === '')) {
        throw new BadRequestError('Send a corrected `response`, `notes`, or both.', null, 'response');
      }
      const [type, id] = target as [FeedbackEntityType, string];
      const orgId = await deps.orgIdFor(principal);
      await checkTarget(principal, orgId, type, id);
      return deps.store.insert({
        id: randomUUID(),
        orgId,
        entityType: type,
        entityId: id,
        response: s.response,
        notes: s.notes,
        createdAt: new Date(),
      });
    },
    async list(principal, entity, page) {
      const orgId = await deps.orgIdFor(principal);
      await checkTarget(principal, orgId, entity.type, entity.id);
      return deps.store.list(orgId, entity, page);
    },
  };
}
