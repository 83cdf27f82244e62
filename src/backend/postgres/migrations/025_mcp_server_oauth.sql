-- 025: OAuth sign-in to a remote MCP server (mirrors sqlite/migrations/025_mcp_server_oauth.sql). The grant is kept
-- sealed in secret_sealed like an API key; these columns say where the sign-in stands and bind a pending sign-in's
-- state (its SHA-256, single-use, expiring in epoch milliseconds) to the organisation's server.
ALTER TABLE mcp_servers ADD COLUMN oauth_status TEXT;
ALTER TABLE mcp_servers ADD COLUMN oauth_state_hash TEXT;
ALTER TABLE mcp_servers ADD COLUMN oauth_state_expires_at BIGINT;
CREATE UNIQUE INDEX mcp_servers_oauth_state ON mcp_servers (oauth_state_hash);
