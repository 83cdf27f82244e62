/**
 * Chat threads: which thread a chat call belongs to (a session id the caller passes, or a new one), who may
 * continue it (its owner only) and read it (src/domain/chat.ts), appending a finished turn, the caller's thread
 * list, a thread's history, and a history written out as a prompt (skills created from a chat).
 *
 * Every rule about reading lives in `mayReadChat`; a thread the caller may not read is reported as absent (404
 * `chat_not_found`), whichever organisation holds it.
 */
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../domain/account';
import {
  isChatOwner,
  mayReadChat,
  type ChatAttachment,
  type ChatCaller,
  type ChatMessageRecord,
  type ChatRole,
  type ChatThread,
} from '../../domain/chat';
import { NotFoundError, PermissionDeniedError } from '../../domain/errors';
import { safeEqualHex, sha256Hex } from '../../lib/hash';
import type { ChatStore } from '../../stores/types/chat';

export interface ChatsServiceDeps {
  store: ChatStore;
  orgIdFor(principal: Principal): Promise<string>;
  now?: () => Date;
}

/** What a chat call asks of its thread. */
export interface ThreadRequest {
  /** The session id the caller passed, or null for a new thread. */
  sessionId: string | null;
  /** `public` on the call: true/false sets the flag, undefined leaves it. */
  makePublic?: boolean | undefined;
  /** `session_token` on the call: a string sets it, null removes it, undefined leaves it. */
  sessionToken?: string | null | undefined;
}

/** A thread opened for one turn: nothing is stored until the turn is appended. */
export interface OpenedThread {
  caller: ChatCaller;
  sessionId: string;
  /** The stored thread, or null when this turn starts it. */
  existing: ChatThread | null;
  /** The stored messages, oldest first. */
  history: ChatMessageRecord[];
  request: ThreadRequest;
}

/** A message of a turn, as stored. */
export interface TurnMessage {
  role: ChatRole;
  content: string;
  attachments: ChatAttachment[];
  meta?: Record<string, unknown> | null;
}

/** A chat written out for a skill author. */
export interface SessionPrompt {
  prompt: string;
  /** The thread's title: the first words the user wrote. */
  title: string;
}

export interface ChatHistory {
  thread: ChatThread;
  messages: ChatMessageRecord[];
}

export interface ChatsService {
  /**
   * The thread a chat call continues or starts.
   * @throws NotFoundError `chat_not_found` when the session exists but the caller may not read it;
   *   PermissionDeniedError when the caller may read it but is not its owner (only owners add turns).
   */
  open(principal: Principal, request: ThreadRequest): Promise<OpenedThread>;
  /** Stores a finished turn: the caller's new messages and the reply, with the call's thread settings. */
  append(opened: OpenedThread, model: string, messages: TurnMessage[]): Promise<ChatThread>;
  /** The caller's own threads, newest first. */
  list(principal: Principal, page: { skip: number; limit: number }): Promise<ChatThread[]>;
  /** @throws NotFoundError `chat_not_found` unless the access rules let the caller read the thread. */
  history(principal: Principal, sessionId: string, sessionToken: string | null): Promise<ChatHistory>;
  /** Whether the caller may read the thread (without a session token): what feedback on a chat requires. */
  readable(principal: Principal, sessionId: string): Promise<boolean>;
  /**
   * The history as a prompt for a skill, with the thread's title (what the skill is named and described after);
   * null when the caller may not read the thread (or it does not exist).
   */
  sessionPrompt(principal: Principal, sessionId: string, sessionToken: string | null): Promise<SessionPrompt | null>;
}

/** Thread titles are the first words the user wrote. */
const TITLE_CHARS = 80;

export function createChatsService(deps: ChatsServiceDeps): ChatsService {
  const { store } = deps;
  const now = deps.now ?? (() => new Date());

  const callerOf = async (principal: Principal): Promise<ChatCaller> => ({
    principal,
    orgId: await deps.orgIdFor(principal),
  });

  const tokenMatches = (thread: ChatThread, token: string | null): boolean =>
    thread.sessionTokenHash !== null && token !== null && safeEqualHex(sha256Hex(token), thread.sessionTokenHash);

  async function readable(principal: Principal, sessionId: string, token: string | null): Promise<ChatThread | null> {
    const thread = await store.getThread(sessionId);
    if (!thread) return null;
    return mayReadChat(await callerOf(principal), thread, tokenMatches(thread, token)) ? thread : null;
  }

  return {
    async open(principal, request) {
      const caller = await callerOf(principal);
      if (request.sessionId === null) {
        return { caller, sessionId: randomUUID(), existing: null, history: [], request };
      }
      const existing = await store.getThread(request.sessionId);
      if (!existing) return { caller, sessionId: request.sessionId, existing: null, history: [], request };
      if (!isChatOwner(caller, existing)) {
        // Nobody but the owner adds turns; whoever may not even read the thread is told it does not exist.
        if (mayReadChat(caller, existing, false)) {
          throw new PermissionDeniedError('Only the owner of a chat can add messages to it; start a new session.');
        }
        throw new NotFoundError('chat', request.sessionId);
      }
      return { caller, sessionId: existing.id, existing, history: await store.messages(existing.id), request };
    },

    async append(opened, model, messages) {
      const at = now();
      const { request, existing } = opened;
      const tokenHash =
        request.sessionToken === undefined
          ? (existing?.sessionTokenHash ?? null)
          : request.sessionToken === null
            ? null
            : sha256Hex(request.sessionToken);
      const { principal } = opened.caller;
      const firstUser = [...opened.history, ...messages].find((m) => m.role === 'user');
      const thread: ChatThread = existing
        ? {
            ...existing,
            model,
            isPublic: request.makePublic ?? existing.isPublic,
            sessionTokenHash: tokenHash,
            updatedAt: at,
          }
        : {
            id: opened.sessionId,
            orgId: opened.caller.orgId,
            ownerUserId: principal.kind === 'user' ? principal.userId : null,
            title: titleOf(firstUser?.content ?? ''),
            model,
            isPublic: request.makePublic ?? false,
            sessionTokenHash: tokenHash,
            messageCount: 0,
            createdAt: at,
            updatedAt: at,
          };
      const written = await store.appendTurn({
        thread,
        create: existing === null,
        messages: messages.map((m) => ({
          role: m.role,
          content: m.content,
          attachments: m.attachments,
          meta: m.meta ?? null,
          createdAt: at,
        })),
      });
      // Another call created the same session id meanwhile: the turn is not the caller's to add.
      if (!written) throw new NotFoundError('chat', opened.sessionId);
      return { ...thread, messageCount: thread.messageCount + messages.length };
    },

    async list(principal, page) {
      const caller = await callerOf(principal);
      const owner = principal.kind === 'user' ? principal.userId : null;
      return store.listThreads(caller.orgId, owner, page);
    },

    async history(principal, sessionId, sessionToken) {
      const thread = await readable(principal, sessionId, sessionToken);
      if (!thread) throw new NotFoundError('chat', sessionId);
      return { thread, messages: await store.messages(thread.id) };
    },

    async readable(principal, sessionId) {
      return (await readable(principal, sessionId, null)) !== null;
    },

    async sessionPrompt(principal, sessionId, sessionToken) {
      const thread = await readable(principal, sessionId, sessionToken);
      if (!thread) return null;
      return { prompt: historyPrompt(thread, await store.messages(thread.id)), title: thread.title };
    },
  };
}

function titleOf(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length === 0) return 'Untitled chat';
  return flat.length > TITLE_CHARS ? `${flat.slice(0, TITLE_CHARS - 1)}…` : flat;
}

const SPEAKER: Record<ChatRole, string> = { system: 'System', user: 'User', assistant: 'Assistant' };

/** A thread written out for a skill author: what the user asked for, and how the agent answered. */
export function historyPrompt(thread: ChatThread, messages: readonly ChatMessageRecord[]): string {
  const lines = [
    `Write a skill that performs the task worked through in this chat ("${thread.title}"): follow what the user ` +
      'asked for and corrected, and the form of the answers they accepted.',
    '',
  ];
  for (const m of messages) {
    const attached = m.attachments.map((a) => `[attached ${a.type}]`).join(' ');
    lines.push(`${SPEAKER[m.role]}: ${[m.content, attached].filter(Boolean).join(' ')}`);
  }
  return lines.join('\n');
}
