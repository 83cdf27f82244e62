-- 001: accounts, wallets, blobs and files.
-- Portable subset: TEXT ids and ISO-8601 UTC timestamps, INTEGER money in micro-dollars.

CREATE TABLE organisations (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  tier TEXT NOT NULL CHECK (tier IN ('free', 'pro', 'enterprise')),
  kind TEXT NOT NULL DEFAULT 'standard' CHECK (kind IN ('standard', 'guest')),
  created_at TEXT NOT NULL
);

CREATE TABLE users (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  is_superuser INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);
CREATE INDEX users_org ON users (org_id);

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  key_hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);

CREATE TABLE wallets (
  org_id TEXT PRIMARY KEY REFERENCES organisations (id) ON DELETE CASCADE,
  balance_micros INTEGER NOT NULL DEFAULT 0,
  updated_at TEXT NOT NULL
);

CREATE TABLE wallet_entries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  amount_micros INTEGER NOT NULL,
  balance_after_micros INTEGER NOT NULL,
  reason TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX wallet_entries_org ON wallet_entries (org_id, id);

-- Every blob on disk that a record refers to; the start-up sweep removes blobs missing from this table.
CREATE TABLE blobs (
  sha256 TEXT PRIMARY KEY,
  bytes INTEGER NOT NULL,
  md5 TEXT NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE files (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  filename TEXT NOT NULL,
  purpose TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'uploaded')),
  bytes INTEGER NOT NULL DEFAULT 0,
  content_type TEXT NOT NULL,
  md5 TEXT,
  sha256 TEXT REFERENCES blobs (sha256),
  created_at TEXT NOT NULL,
  upload_expires_at TEXT
);
CREATE INDEX files_org_created ON files (org_id, status, created_at DESC);
CREATE INDEX files_org_md5 ON files (org_id, md5);
CREATE INDEX files_sha256 ON files (sha256);
