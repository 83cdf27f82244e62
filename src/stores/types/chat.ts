/**
 * What the chats service asks of persistence: threads (found by session id across organisations, so the access
 * rules can decide; listed per owner) and their messages, a turn appended in one transaction.
 */
import type { ChatMessageRecord, ChatThread } from '../../domain/chat';

/** A turn to append: the thread (created when new, else its settings updated) and its new messages. */
export interface ChatTurnWrite {
  thread: ChatThread;
  /** True when the thread does not exist yet. */
  create: boolean;
  messages: Omit<ChatMessageRecord, 'threadId' | 'seq'>[];
}

export interface ChatStore {
  /** By session id, whatever its organisation (callers apply the access rules). */
  getThread(id: string): Promise<ChatThread | null>;
  /** One owner's threads (ownerUserId null: the organisation's guest threads), newest first. */
  listThreads(orgId: string, ownerUserId: string | null, page: { skip: number; limit: number }): Promise<ChatThread[]>;
  /** Every message of a thread, oldest first. */
  messages(threadId: string): Promise<ChatMessageRecord[]>;
  /**
   * Appends a turn. @returns false when `create` is set and the session id was taken meanwhile (the caller
   * decides what that means), true otherwise.
   */
  appendTurn(turn: ChatTurnWrite): Promise<boolean>;
}
