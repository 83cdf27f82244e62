/**
 * Chat-thread routes, mounted on `/v1/chat`: the caller's threads (`GET /v1/chat`) and one thread's history
 * (`GET /v1/chat/messages?session_id=`, with the optional `X-Session-Token` header). The access rules are the
 * chats service's; a thread the caller may not read is a 404.
 */
import { Router } from 'express';
import type { ChatsService } from '../../services/chats/chats.service';
import { principalOf, userOf } from '../request-context';
import {
  chatMessagesQuerySchema,
  listChatsQuerySchema,
  toChatHistoryWire,
  toChatThreadWire,
} from '../../wire/chats.schemas';
import { z } from 'zod';
import { declare, route } from '../api/route-declaration';

const tag = 'Chat';
const threadSchema = z.looseObject({
  session_id: z.string(),
  title: z.string().nullable(),
  model: z.string().nullable(),
  is_public: z.boolean(),
  message_count: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const CHAT_ROUTES = {
  list: declare({
    method: 'get',
    path: '/',
    tag,
    summary: 'List chat threads (agent-model chats kept by session)',
    auth: 'key',
    query: listChatsQuerySchema,
    responses: { 200: { description: 'Threads, newest first', schema: z.array(threadSchema) } },
  }),
  messages: declare({
    method: 'get',
    path: '/messages',
    tag,
    summary: "A thread's messages (a guest's thread needs its X-Session-Token)",
    auth: 'open',
    query: chatMessagesQuerySchema,
    responses: {
      200: {
        description: 'The thread and its messages',
        schema: threadSchema.extend({
          messages: z.array(z.looseObject({ index: z.number().int(), role: z.string(), created_at: z.string() })),
        }),
      },
    },
    errors: [403, 404],
  }),
};

export function chatsRoutes(chats: ChatsService): Router {
  const router = Router();

  route(router, CHAT_ROUTES.list, async (req, res, input) => {
    const principal = userOf(req);
    const page = input.query();
    res.json((await chats.list(principal, page)).map(toChatThreadWire));
  });

  route(router, CHAT_ROUTES.messages, async (req, res, input) => {
    const { session_id: sessionId } = input.query();
    const { thread, messages } = await chats.history(principalOf(req), sessionId, req.get('x-session-token') ?? null);
    res.json(toChatHistoryWire(thread, messages));
  });

  return router;
}
