-- 004: skills. One row per stored version; the zip is a content-addressed blob (the `blobs` row keeps it alive).
-- org_id NULL marks a public (built-in) skill, visible to every caller.

CREATE TABLE skills (
  id TEXT PRIMARY KEY,
  org_id TEXT REFERENCES organisations (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  skill_version TEXT NOT NULL,
  description TEXT NOT NULL,
  is_public INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL CHECK (status IN ('completed', 'pending', 'failed')),
  -- How the version was made: an uploaded zip, a prompt, a chat session, or the built-in folder.
  source TEXT NOT NULL CHECK (source IN ('zip', 'prompt', 'session', 'builtin')),
  content_hash TEXT NOT NULL REFERENCES blobs (sha256),
  size_bytes INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
-- Latest by name within a scope: the lookup every skill reference makes.
CREATE INDEX skills_name_scope ON skills (name, org_id, created_at DESC);
CREATE INDEX skills_org_created ON skills (org_id, created_at DESC);
-- The same bytes under the same name in the same scope are one version (creating them again returns it).
CREATE UNIQUE INDEX skills_scope_content ON skills (COALESCE(org_id, ''), name, content_hash);
CREATE INDEX skills_content ON skills (content_hash);
