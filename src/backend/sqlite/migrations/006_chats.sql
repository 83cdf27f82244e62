-- 006: chat threads of the agent models and their messages.
-- A thread's id is the session id callers pass (`session_id`); it is unique across organisations, and a thread is
-- only ever found within the organisation that owns it (or when public, see src/domain/chat.ts).

CREATE TABLE chat_threads (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  -- The user who started the thread; NULL for a guest (its organisation is the guest organisation of its IP).
  owner_user_id TEXT,
  title TEXT NOT NULL,
  model TEXT NOT NULL,
  is_public INTEGER NOT NULL DEFAULT 0,
  -- SHA-256 (hex) of the thread's session token; NULL when it has none. The token itself is never stored.
  session_token_hash TEXT,
  message_count INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
-- GET /v1/chat: one owner's threads, newest first.
CREATE INDEX chat_threads_owner ON chat_threads (org_id, owner_user_id, created_at DESC);

CREATE TABLE chat_messages (
  thread_id TEXT NOT NULL REFERENCES chat_threads (id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
  -- The text of the message.
  content TEXT NOT NULL,
  -- Media the message carried, as references (file ids, artifact ids, URLs): [{type, source}].
  attachments_json TEXT NOT NULL DEFAULT '[]',
  -- Assistant turns: the model, token usage and cost of the turn; NULL for the caller's messages.
  meta_json TEXT,
  created_at TEXT NOT NULL,
  PRIMARY KEY (thread_id, seq)
);
