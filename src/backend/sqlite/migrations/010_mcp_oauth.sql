-- 010: OAuth 2.1 for /mcp, Prism as its own authorization server (docs/mcp-clients.md). Clients registered by
-- dynamic client registration; consent requests waiting for a person; authorization codes; access and refresh
-- tokens. Codes, tokens and request ids are stored only as SHA-256 hashes: the values exist only on the wire.

CREATE TABLE oauth_clients (
  client_id TEXT PRIMARY KEY,
  -- The registered client information (RFC 7591 response), JSON; public clients only (no secret).
  info_json TEXT NOT NULL,
  created_at TEXT NOT NULL
);

-- An authorization request shown on the consent page, until the person approves or denies it (single use).
CREATE TABLE oauth_requests (
  id_hash TEXT PRIMARY KEY,
  client_id TEXT NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
  -- SHA-256 of the consent form's CSRF token (double-submitted as a cookie).
  csrf_hash TEXT NOT NULL,
  -- redirect_uri, state, scopes, code_challenge, resource, JSON.
  params_json TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);

-- One person's approval of one client: its codes and tokens share the grant id, so revoking one revokes all.
CREATE TABLE oauth_codes (
  code_hash TEXT PRIMARY KEY,
  grant_id TEXT NOT NULL,
  client_id TEXT NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- The API key the person signed in with; NULL when the single-user owner approved without one.
  key_id TEXT REFERENCES api_keys (id) ON DELETE CASCADE,
  scopes TEXT NOT NULL,
  resource TEXT NOT NULL,
  code_challenge TEXT NOT NULL,
  redirect_uri TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);

CREATE TABLE oauth_tokens (
  token_hash TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
  grant_id TEXT NOT NULL,
  client_id TEXT NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  key_id TEXT REFERENCES api_keys (id) ON DELETE CASCADE,
  scopes TEXT NOT NULL,
  resource TEXT NOT NULL,
  -- Unix seconds.
  expires_at INTEGER NOT NULL,
  -- Set when revoked, or (refresh tokens) when rotated: a rotated token used again revokes its whole grant.
  revoked_at INTEGER
);
CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);
