-- 030: ledger retention (src/backend/ledger-retention.ts, docs/operations.md). Past PRISM_LEDGER_RETENTION_DAYS the
-- per-call rows of the wallet ledger and of the spend ledger are rolled up into one row per day (per organisation and
-- reason; per organisation, key and model) whose totals are exact, so balances, a key's spend and the admin spend
-- reports (by key, model or day) answer the same; the per-call rows are deleted, or moved to the archive tables.
-- `calls` / `entries`: how many per-call rows a row stands for (1 for a per-call row). `rollup_key`: the day and
-- group a rolled-up row stands for (null for a per-call row), so a later run adds to it instead of writing another.

ALTER TABLE key_spend ADD COLUMN calls BIGINT NOT NULL DEFAULT 1;
ALTER TABLE key_spend ADD COLUMN rollup_key TEXT UNIQUE;
ALTER TABLE wallet_entries ADD COLUMN entries BIGINT NOT NULL DEFAULT 1;
ALTER TABLE wallet_entries ADD COLUMN rollup_key TEXT UNIQUE;

CREATE TABLE key_spend_archive (
  id TEXT PRIMARY KEY,
  key_id TEXT,
  org_id TEXT NOT NULL,
  model TEXT NOT NULL,
  micros BIGINT NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE wallet_entries_archive (
  id BIGINT PRIMARY KEY,
  org_id TEXT NOT NULL,
  amount_micros BIGINT NOT NULL,
  balance_after_micros BIGINT NOT NULL,
  reason TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL
);
