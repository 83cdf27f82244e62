/**
 * Feedback: corrections and notes a caller attaches to one of its requests (predictions), agent executions or
 * chats. Exactly one target id per submission, and at least a response or notes; reads are org-scoped. A target
 * the caller cannot see is absent for both: submitting and listing answer the same 404 (`prediction_not_found`,
 * `execution_not_found`, `chat_not_found`).
 */
import { randomUUID } from 'node:crypto';
import type { Principal } from '../domain/account';
import { BadRequestError, NotFoundError } from '../domain/errors';
import type { ExecutionStore } from '../stores/types/execution';
import type { FeedbackEntityType, FeedbackRecord, FeedbackStore, PredictionStore } from '../stores/types';
import type { ChatsService } from './chats/chats.service';

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
   * Where targets are looked up: predictions and executions of the caller's organisation, and chats the caller may
   * read (what `GET /v1/chat/messages` answers).
   */
  targets: {
    predictions: Pick<PredictionStore, 'get'>;
    executions: Pick<ExecutionStore, 'get'>;
    chats: Pick<ChatsService, 'readable'>;
  };
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
  /** Whether the caller may see the target. */
  const targetExists = async (principal: Principal, orgId: string, type: FeedbackEntityType, id: string) => {
    if (type === 'request') return (await deps.targets.predictions.get(orgId, id)) !== null;
    if (type === 'agent_execution') return (await deps.targets.executions.get(orgId, id)) !== null;
    return deps.targets.chats.readable(principal, id);
  };
  const checkTarget = async (principal: Principal, orgId: string, type: FeedbackEntityType, id: string) => {
    if (!(await targetExists(principal, orgId, type, id))) throw new NotFoundError(NOT_FOUND_BY_TYPE[type], id);
  };

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
