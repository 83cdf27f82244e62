/**
 * Wire shapes of the chat-thread routes (`GET /v1/chat`, `GET /v1/chat/messages`): their queries and how threads
 * and messages are rendered. Session tokens are never rendered, only whether a thread has one.
 */
import { z } from 'zod';
import type { ChatMessageRecord, ChatThread } from '../domain/chat';
import { pagination } from './common.schemas';

/** `skip` >= 0 default 0, `limit` 1..25 default 5 (spec "Chats"). */
export const listChatsQuerySchema = pagination({ max: 25, default: 5 });

export const chatMessagesQuerySchema = z.object({ session_id: z.string().min(1).max(200) });

export function toChatThreadWire(thread: ChatThread): Record<string, unknown> {
  return {
    session_id: thread.id,
    title: thread.title,
    model: thread.model,
    is_public: thread.isPublic,
    has_session_token: thread.sessionTokenHash !== null,
    message_count: thread.messageCount,
    created_at: thread.createdAt.toISOString(),
    updated_at: thread.updatedAt.toISOString(),
  };
}

export function toChatMessageWire(message: ChatMessageRecord): Record<string, unknown> {
  return {
    index: message.seq,
    role: message.role,
    content: message.content,
    attachments: message.attachments,
    ...(message.meta ?? {}),
    created_at: message.createdAt.toISOString(),
  };
}

export function toChatHistoryWire(thread: ChatThread, messages: readonly ChatMessageRecord[]) {
  return { ...toChatThreadWire(thread), messages: messages.map(toChatMessageWire) };
}
