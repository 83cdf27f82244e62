/**
 * The chats tables' rows as both SQL dialects answer them, and their mapping to domain records: written once,
 * imported by the SQLite and the PostgreSQL stores alike, so neither backend imports the other.
 */
import type { ChatAttachment, ChatMessageRecord, ChatRole, ChatThread } from '../../domain/chat';

export interface ThreadRow {
  id: string;
  org_id: string;
  owner_user_id: string | null;
  title: string;
  model: string;
  is_public: number;
  session_token_hash: string | null;
  message_count: number;
  created_at: string;
  updated_at: string;
}

export interface MessageRow {
  thread_id: string;
  seq: number;
  role: ChatRole;
  content: string;
  attachments_json: string;
  meta_json: string | null;
  created_at: string;
}

export const toThread = (r: ThreadRow): ChatThread => ({
  id: r.id,
  orgId: r.org_id,
  ownerUserId: r.owner_user_id,
  title: r.title,
  model: r.model,
  isPublic: r.is_public === 1,
  sessionTokenHash: r.session_token_hash,
  messageCount: r.message_count,
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
});

export const toMessage = (r: MessageRow): ChatMessageRecord => ({
  threadId: r.thread_id,
  seq: r.seq,
  role: r.role,
  content: r.content,
  attachments: JSON.parse(r.attachments_json) as ChatAttachment[],
  meta: r.meta_json === null ? null : (JSON.parse(r.meta_json) as Record<string, unknown>),
  createdAt: new Date(r.created_at),
});
