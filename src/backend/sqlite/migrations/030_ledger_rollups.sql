-- 030: ledger retention (mirrors postgres/migrations/030_ledger_rollups.sql; src/backend/ledger-retention.ts).
-- Past PRISM_LEDGER_RETENTION_DAYS the per-call rows of the wallet ledger and of the spend ledger are rolled up into
-- one row per day and group with exact totals; `calls` / `entries` say how many per-call rows a row stands for,
-- `rollup_key` names a rolled-up row's day and group (null for a per-call row).

ALTER TABLE key_spend ADD COLUMN calls INTEGER NOT NULL DEFAULT 1;
ALTER TABLE key_spend ADD COLUMN rollup_key TEXT;
CREATE UNIQUE INDEX key_spend_rollup ON key_spend (rollup_key);
ALTER TABLE wallet_entries ADD COLUMN entries INTEGER NOT NULL DEFAULT 1;
ALTER TABLE wallet_entries ADD COLUMN rollup_key TEXT;
CREATE UNIQUE INDEX wallet_entries_rollup ON wallet_entries (rollup_key);

CREATE TABLE key_spend_archive (
  id TEXT PRIMARY KEY,
  key_id TEXT,
  org_id TEXT NOT NULL,
  model TEXT NOT NULL,
  micros INTEGER NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE wallet_entries_archive (
  id INTEGER PRIMARY KEY,
  org_id TEXT NOT NULL,
  amount_micros INTEGER NOT NULL,
  balance_after_micros INTEGER NOT NULL,
  reason TEXT NOT NULL,
  created_at TEXT NOT NULL
);
