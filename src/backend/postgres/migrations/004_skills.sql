-- 004: skills (mirrors sqlite/migrations/004_skills.sql). org_id NULL marks a public (built-in) skill.

CREATE TABLE skills (
  seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  id TEXT PRIMARY KEY,
  org_id TEXT REFERENCES organisations (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  skill_version TEXT NOT NULL,
  description TEXT NOT NULL,
  is_public BOOLEAN NOT NULL DEFAULT FALSE,
  status TEXT NOT NULL CHECK (status IN ('completed', 'pending', 'failed')),
  source TEXT NOT NULL CHECK (source IN ('zip', 'prompt', 'session', 'builtin')),
  content_hash TEXT NOT NULL REFERENCES blobs (sha256),
  size_bytes BIGINT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX skills_name_scope ON skills (name, org_id, created_at DESC);
CREATE INDEX skills_org_created ON skills (org_id, created_at DESC);
CREATE UNIQUE INDEX skills_scope_content ON skills (COALESCE(org_id, ''), name, content_hash);
CREATE INDEX skills_content ON skills (content_hash);
