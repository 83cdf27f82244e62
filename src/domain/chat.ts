/**
 * Chat threads of the agent models and who may read or continue them.
 *
 * A thread belongs to the organisation and user that started it (a guest's thread to its guest organisation, with
 * no user). The read rules are the spec's, in one place so the history route and skills-from-a-chat agree: the
 * owner reads their own thread; anyone, authenticated or guest, reads a public thread; a superuser reads any
 * thread; and a thread that carries a session token is readable by nobody but its owner without the matching
 * token. Only the owner adds turns. Whoever may not read a thread is told it does not exist (404).
 */
import type { Principal } from './account';

export type ChatRole = 'system' | 'user' | 'assistant';

/** A media part of a message, kept as a reference (file id, artifact id or URL), never as bytes. */
export interface ChatAttachment {
  type: 'image' | 'document' | 'video' | 'audio' | 'file';
  source: string;
}

export interface ChatThread {
  /** The session id. */
  id: string;
  orgId: string;
  /** Null for a guest's thread. */
  ownerUserId: string | null;
  title: string;
  model: string;
  isPublic: boolean;
  /** SHA-256 hex of the session token, or null. */
  sessionTokenHash: string | null;
  messageCount: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface ChatMessageRecord {
  threadId: string;
  /** 0-based position in the thread. */
  seq: number;
  role: ChatRole;
  content: string;
  attachments: ChatAttachment[];
  /** Assistant turns: model, usage and cost; null for the caller's messages. */
  meta: Record<string, unknown> | null;
  createdAt: Date;
}

/** The caller as the rules see it: the principal and the organisation it acts in (a guest's is per IP). */
export interface ChatCaller {
  principal: Principal;
  orgId: string;
}

/** The owner: the user who started it, or for a guest thread a guest of the same guest organisation. */
export function isChatOwner(caller: ChatCaller, thread: ChatThread): boolean {
  if (caller.orgId !== thread.orgId) return false;
  const { principal } = caller;
  return principal.kind === 'user' ? principal.userId === thread.ownerUserId : thread.ownerUserId === null;
}

/**
 * Whether the caller may read the thread's history. `tokenMatches` says whether the caller presented the
 * thread's session token (false when the thread has none or none was sent).
 */
export function mayReadChat(caller: ChatCaller, thread: ChatThread, tokenMatches: boolean): boolean {
  const { principal } = caller;
  // Guests read public threads only, their own included.
  if (principal.kind === 'user' && isChatOwner(caller, thread)) return true;
  // Every other reader is a non-owner: a thread with a token needs it, whoever asks (superusers included).
  if (thread.sessionTokenHash !== null && !tokenMatches) return false;
  if (thread.isPublic) return true;
  return principal.kind === 'user' && principal.isSuperuser;
}
