-- 017: remote MCP servers an organisation registered for its agents (docs/agents.md). The API key is stored sealed
-- (AES-256-GCM with PRISM_SECRETS_KEY, bound to the row's id), never in clear.

CREATE TABLE mcp_servers (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  url TEXT NOT NULL,
  auth_kind TEXT NOT NULL,
  secret_sealed TEXT,
  api_key_header TEXT,
  allowed_tools_json TEXT,
  timeout_ms INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (org_id, name)
);
