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
import { z } from 'zod';
import { declare, route } from '../api/route-declaration';
import { feedbackSchema } from '../api/response-schemas';

const tag = 'Feedback';
const feedbackList = z.looseObject({ items: z.array(feedbackSchema) });

export const FEEDBACK_ROUTES = {
  submit: declare({
    method: 'post',
    path: '/submit',
    tag,
    summary: 'Feedback on a prediction, an agent execution or a chat (exactly one id)',
    auth: 'key',
    body: feedbackSubmitBodySchema,
    responses: { 200: { description: 'The feedback', schema: feedbackSchema } },
    errors: [404],
  }),
  list: declare({
    method: 'get',
    path: '/:entity_id',
    tag,
    summary: 'The feedback on one prediction, execution or chat (`type` says which)',
    auth: 'key',
    params: feedbackEntityParamsSchema,
    query: feedbackListQuerySchema,
    responses: { 200: { description: 'The feedback, with the id under its kind’s name', schema: feedbackList } },
  }),
};

export function feedbackRoutes(feedback: FeedbackService): Router {
  const router = Router();

  route(router, FEEDBACK_ROUTES.submit, async (req, res, input) => {
    const user = userOf(req); // authenticate before validating
    const body = input.body();
    const record = await feedback.submit(user, {
      requestId: body.request_id ?? null,
      agentExecutionId: body.agent_execution_id ?? null,
      chatId: body.chat_id ?? null,
      response: body.response ?? null,
      notes: body.notes ?? null,
    });
    res.status(200).json(toFeedbackWire(record));
  });

  route(router, FEEDBACK_ROUTES.list, async (req, res, input) => {
    const { entity_id: id } = input.params();
    const { type, limit, offset } = input.query();
    const items = await feedback.list(userOf(req), { type, id }, { limit, offset });
    res.json(toFeedbackListWire(type, id, items));
  });

  return router;
}
