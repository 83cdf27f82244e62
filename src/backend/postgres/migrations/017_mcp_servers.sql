-- 017: remote MCP servers an organisation registered for its agents (mirrors sqlite/migrations/017_mcp_servers.sql).
-- The API key is stored sealed (AES-256-GCM with PRISM_SECRETS_KEY, bound to the row's id), never in clear.

CREATE TABLE mcp_servers (
  seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  url TEXT NOT NULL,
  auth_kind TEXT NOT NULL,
  secret_sealed TEXT,
  api_key_header TEXT,
  allowed_tools_json TEXT,
  timeout_ms INTEGER NOT NULL,
  created_at TIMESTAMPTZ NOT NULL,
  UNIQUE (org_id, name)
);
