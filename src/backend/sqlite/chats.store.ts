/**
 * SQLite ChatStore: chat threads and their messages (migration 006). A turn (the thread row and the turn's
 * messages) is written in one transaction, numbered after the thread's last message.
 */

import type { ChatStore } from '../../stores/types/chat';
import type { SqliteDatabase } from './database';
import { type ThreadRow, type MessageRow, toThread, toMessage } from '../../stores/rows/chats.rows';

export function createSqliteChatStore(db: SqliteDatabase): ChatStore {
  const byId = db.prepare<[string], ThreadRow>('SELECT * FROM chat_threads WHERE id = ?');
  const listOwned = db.prepare<[string, string | null, number, number], ThreadRow>(
    `SELECT * FROM chat_threads WHERE org_id = ? AND owner_user_id IS ?
      ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`,
  );
  const messages = db.prepare<[string], MessageRow>('SELECT * FROM chat_messages WHERE thread_id = ? ORDER BY seq');
  const insertThread = db.prepare(
    `INSERT INTO chat_threads (id, org_id, owner_user_id, title, model, is_public, session_token_hash,
       message_count, created_at, updated_at)
     VALUES (@id, @org_id, @owner_user_id, @title, @model, @is_public, @session_token_hash, 0, @at, @at)
     ON CONFLICT (id) DO NOTHING`,
  );
  const updateThread = db.prepare(
    `UPDATE chat_threads SET model = @model, is_public = @is_public, session_token_hash = @session_token_hash,
       message_count = message_count + @added, updated_at = @at WHERE id = @id`,
  );
  const lastSeq = db.prepare<[string], { seq: number | null }>(
    'SELECT MAX(seq) AS seq FROM chat_messages WHERE thread_id = ?',
  );
  const insertMessage = db.prepare(
    `INSERT INTO chat_messages (thread_id, seq, role, content, attachments_json, meta_json, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );

  const append = db.transaction((turn: Parameters<ChatStore['appendTurn']>[0]): boolean => {
    const { thread } = turn;
    const at = (turn.messages.at(-1)?.createdAt ?? thread.updatedAt).toISOString();
    if (turn.create) {
      const inserted = insertThread.run({
        id: thread.id,
        org_id: thread.orgId,
        owner_user_id: thread.ownerUserId,
        title: thread.title,
        model: thread.model,
        is_public: thread.isPublic ? 1 : 0,
        session_token_hash: thread.sessionTokenHash,
        at: thread.createdAt.toISOString(),
      });
      if (inserted.changes === 0) return false;
    }
    let seq = (lastSeq.get(thread.id)?.seq ?? -1) + 1;
    for (const m of turn.messages) {
      insertMessage.run(
        thread.id,
        seq,
        m.role,
        m.content,
        JSON.stringify(m.attachments),
        m.meta === null ? null : JSON.stringify(m.meta),
        m.createdAt.toISOString(),
      );
      seq += 1;
    }
    updateThread.run({
      id: thread.id,
      model: thread.model,
      is_public: thread.isPublic ? 1 : 0,
      session_token_hash: thread.sessionTokenHash,
      added: turn.messages.length,
      at,
    });
    return true;
  });

  return {
    async getThread(id) {
      const row = byId.get(id);
      return row ? toThread(row) : null;
    },
    async listThreads(orgId, ownerUserId, page) {
      return listOwned.all(orgId, ownerUserId, page.limit, page.skip).map(toThread);
    },
    async messages(threadId) {
      return messages.all(threadId).map(toMessage);
    },
    async appendTurn(turn) {
      return append(turn);
    },
  };
}
