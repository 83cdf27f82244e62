/**
 * PostgreSQL ChatStore: threads and their messages. A turn is appended in one transaction that locks its thread
 * row first, so two replicas appending to one thread at once number their messages one after the other.
 */
import type pg from 'pg';
import { toMessage, toThread, type MessageRow, type ThreadRow } from '../../stores/rows/chats.rows';
import type { ChatStore } from '../../stores/types/chat';
import { withTransaction } from './database';

export function createPostgresChatStore(pool: pg.Pool): ChatStore {
  return {
    async getThread(id) {
      const row = (await pool.query<ThreadRow>('SELECT * FROM chat_threads WHERE id = $1', [id])).rows[0];
      return row ? toThread(row) : null;
    },
    async listThreads(orgId, ownerUserId, page) {
      const { rows } = await pool.query<ThreadRow>(
        `SELECT * FROM chat_threads WHERE org_id = $1 AND owner_user_id IS NOT DISTINCT FROM $2
          ORDER BY created_at DESC, seq DESC LIMIT $3 OFFSET $4`,
        [orgId, ownerUserId, page.limit, page.skip],
      );
      return rows.map(toThread);
    },
    async messages(threadId) {
      const { rows } = await pool.query<MessageRow>('SELECT * FROM chat_messages WHERE thread_id = $1 ORDER BY seq', [
        threadId,
      ]);
      return rows.map(toMessage);
    },
    async appendTurn(turn) {
      const { thread } = turn;
      const at = (turn.messages.at(-1)?.createdAt ?? thread.updatedAt).toISOString();
      return withTransaction(pool, async (client) => {
        if (turn.create) {
          const inserted = await client.query(
            `INSERT INTO chat_threads (id, org_id, owner_user_id, title, model, is_public, session_token_hash,
                                       message_count, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8, $8) ON CONFLICT (id) DO NOTHING`,
            [
              thread.id,
              thread.orgId,
              thread.ownerUserId,
              thread.title,
              thread.model,
              thread.isPublic,
              thread.sessionTokenHash,
              thread.createdAt.toISOString(),
            ],
          );
          if (inserted.rowCount === 0) return false;
        }
        const locked = await client.query<{ message_count: number }>(
          'SELECT message_count FROM chat_threads WHERE id = $1 FOR UPDATE',
          [thread.id],
        );
        if (!locked.rows[0]) throw new Error(`chat thread ${thread.id} does not exist`);
        const last = await client.query<{ seq: number | null }>(
          'SELECT MAX(seq) AS seq FROM chat_messages WHERE thread_id = $1',
          [thread.id],
        );
        const first = (last.rows[0]?.seq ?? -1) + 1;
        if (turn.messages.length > 0) {
          await client.query(
            `INSERT INTO chat_messages (thread_id, seq, role, content, attachments_json, meta_json, created_at)
             SELECT $1, $2 + m.n - 1, m.role, m.content, m.attachments::jsonb, m.meta::jsonb, m.created_at
               FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
                    WITH ORDINALITY AS m(role, content, attachments, meta, created_at, n)`,
            [
              thread.id,
              first,
              turn.messages.map((m) => m.role),
              turn.messages.map((m) => m.content),
              turn.messages.map((m) => JSON.stringify(m.attachments)),
              turn.messages.map((m) => (m.meta === null ? null : JSON.stringify(m.meta))),
              turn.messages.map((m) => m.createdAt.toISOString()),
            ],
          );
        }
        await client.query(
          `UPDATE chat_threads SET model = $2, is_public = $3, session_token_hash = $4,
             message_count = message_count + $5, updated_at = $6 WHERE id = $1`,
          [thread.id, thread.model, thread.isPublic, thread.sessionTokenHash, turn.messages.length, at],
        );
        return true;
      });
    },
  };
}
