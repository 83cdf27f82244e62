-- 001: accounts, wallets, blobs and files (mirrors sqlite/migrations/001_init.sql).
-- PostgreSQL types: timestamptz for times, bigint micro-dollars, boolean flags; a `seq` identity column where
-- SQLite orders ties by rowid.

CREATE TABLE organisations (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  tier TEXT NOT NULL CHECK (tier IN ('free', 'pro', 'enterprise')),
  kind TEXT NOT NULL DEFAULT 'standard' CHECK (kind IN ('standard', 'guest')),
  created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE users (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  is_superuser BOOLEAN NOT NULL DEFAULT FALSE,
  created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX users_org ON users (org_id, is_superuser, created_at);

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  key_hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL,
  revoked_at TIMESTAMPTZ
);
CREATE INDEX api_keys_org ON api_keys (org_id);

CREATE TABLE wallets (
  org_id TEXT PRIMARY KEY REFERENCES organisations (id) ON DELETE CASCADE,
  balance_micros BIGINT NOT NULL DEFAULT 0,
  updated_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE wallet_entries (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  amount_micros BIGINT NOT NULL,
  balance_after_micros BIGINT NOT NULL,
  reason TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX wallet_entries_org ON wallet_entries (org_id, id);

CREATE TABLE blobs (
  sha256 TEXT PRIMARY KEY,
  bytes BIGINT NOT NULL,
  md5 TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE files (
  seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  filename TEXT NOT NULL,
  purpose TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'uploaded')),
  bytes BIGINT NOT NULL DEFAULT 0,
  content_type TEXT NOT NULL,
  md5 TEXT,
  sha256 TEXT REFERENCES blobs (sha256),
  created_at TIMESTAMPTZ NOT NULL,
  upload_expires_at TIMESTAMPTZ
);
CREATE INDEX files_org_created ON files (org_id, status, created_at DESC, seq DESC);
CREATE INDEX files_org_md5 ON files (org_id, md5);
CREATE INDEX files_sha256 ON files (sha256);
CREATE INDEX files_pending_expiry ON files (upload_expires_at) WHERE status = 'pending';
