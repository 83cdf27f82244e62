/**
 * Feedback routes: submit (current and the legacy `/v1/experimental/feedback/submit` path) and list by target.
 */
import { Router } from 'express';
import type { FeedbackService } from '../../services/feedback.service';
import { userOf } from '../request-context';
import {
  feedbackEntityParamsSchema,
  feedbackListQuerySchema,
  feedbackSubmitBodySchema,
  toFeedbackListWire,
  toFeedbackWire,
} from '../../wire/feedback.schemas';
import { parseInput } from '../../wire/validation';

export function feedbackRoutes(feedback: FeedbackService): Router {
  const router = Router();

  router.post('/submit', async (req, res) => {
    const user = userOf(req); // authenticate before validating
    const body = parseInput(feedbackSubmitBodySchema, req.body, 'body');
    const record = await feedback.submit(user, {
      requestId: body.request_id ?? null,
      agentExecutionId: body.agent_execution_id ?? null,
      chatId: body.chat_id ?? null,
      response: body.response ?? null,
      notes: body.notes ?? null,
    });
    res.status(200).json(toFeedbackWire(record));
  });

  router.get('/:entity_id', async (req, res) => {
    const { entity_id: id } = parseInput(feedbackEntityParamsSchema, req.params, 'path');
    const { type, limit, offset } = parseInput(feedbackListQuerySchema, req.query, 'query');
    const items = await feedback.list(userOf(req), { type, id }, { limit, offset });
    res.json(toFeedbackListWire(type, id, items));
  });

  return router;
}
