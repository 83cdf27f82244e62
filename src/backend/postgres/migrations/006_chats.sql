-- 006: chat threads of the agent models and their messages (mirrors sqlite/migrations/006_chats.sql).

CREATE TABLE chat_threads (
  seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  owner_user_id TEXT,
  title TEXT NOT NULL,
  model TEXT NOT NULL,
  is_public BOOLEAN NOT NULL DEFAULT FALSE,
  session_token_hash TEXT,
  message_count INTEGER NOT NULL DEFAULT 0,
  created_at TIMESTAMPTZ NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX chat_threads_owner ON chat_threads (org_id, owner_user_id, created_at DESC, seq DESC);

CREATE TABLE chat_messages (
  thread_id TEXT NOT NULL REFERENCES chat_threads (id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
  content TEXT NOT NULL,
  attachments_json JSONB NOT NULL DEFAULT '[]',
  meta_json JSONB,
  created_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (thread_id, seq)
);
