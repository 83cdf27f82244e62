-- 031: pre-registered OAuth clients of remote MCP servers, and one refresh at a time across replicas (docs/agents.md).
-- A server whose authorization server offers no dynamic registration is registered with the client id its operator
-- issued (kept in clear: it is not a secret) and, for a confidential client, its secret (sealed with
-- PRISM_SECRETS_KEY like an API key). A replica refreshing a grant holds a lease on the row (its own id, until an
-- epoch millisecond) taken by compare-and-swap, so a rotating refresh token is never spent twice.
ALTER TABLE mcp_servers ADD COLUMN oauth_client_id TEXT;
ALTER TABLE mcp_servers ADD COLUMN oauth_client_secret_sealed TEXT;
ALTER TABLE mcp_servers ADD COLUMN oauth_refresh_owner TEXT;
ALTER TABLE mcp_servers ADD COLUMN oauth_refresh_until BIGINT;
