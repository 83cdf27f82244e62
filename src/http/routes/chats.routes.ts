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
import { parseInput } from '../../wire/validation';

export function chatsRoutes(chats: ChatsService): Router {
  const router = Router();

  router.get('/', async (req, res) => {
    const principal = userOf(req);
    const page = parseInput(listChatsQuerySchema, req.query, 'query');
    res.json((await chats.list(principal, page)).map(toChatThreadWire));
  });

  router.get('/messages', async (req, res) => {
    const { session_id: sessionId } = parseInput(chatMessagesQuerySchema, req.query, 'query');
    const { thread, messages } = await chats.history(principalOf(req), sessionId, req.get('x-session-token') ?? null);
    res.json(toChatHistoryWire(thread, messages));
  });

  return router;
}
