-- 026: the operator's API (/v1/admin, src/services/admin): what a key may do beyond being active (an expiry, the
-- models it may call, a budget with a reset period), organisations' budgets, the holds taken against both, the
-- spend each gateway call settled (for spend reports by key, model and day) and the audit log of admin actions.
-- Timestamps are ISO-8601 UTC text in both dialects, so one set of SQL serves both.

CREATE TABLE api_key_policies (
  key_id TEXT PRIMARY KEY REFERENCES api_keys (id) ON DELETE CASCADE,
  expires_at TEXT,
  allowed_models TEXT,
  budget_micros INTEGER,
  budget_period TEXT NOT NULL DEFAULT 'none' CHECK (budget_period IN ('daily', 'monthly', 'none')),
  period_start TEXT NOT NULL,
  spent_micros INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE key_budget_holds (
  id TEXT PRIMARY KEY,
  key_id TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  micros INTEGER NOT NULL CHECK (micros > 0),
  expires_at TEXT NOT NULL
);
CREATE INDEX key_budget_holds_key ON key_budget_holds (key_id, expires_at);

-- An organisation's own budget (beside its wallet), held the same way as a key's.
CREATE TABLE org_budgets (
  org_id TEXT PRIMARY KEY REFERENCES organisations (id) ON DELETE CASCADE,
  budget_micros INTEGER NOT NULL,
  budget_period TEXT NOT NULL DEFAULT 'none' CHECK (budget_period IN ('daily', 'monthly', 'none')),
  period_start TEXT NOT NULL,
  spent_micros INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE org_budget_holds (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  micros INTEGER NOT NULL CHECK (micros > 0),
  expires_at TEXT NOT NULL
);
CREATE INDEX org_budget_holds_org ON org_budget_holds (org_id, expires_at);

CREATE TABLE key_spend (
  id TEXT PRIMARY KEY,
  key_id TEXT,
  org_id TEXT NOT NULL,
  model TEXT NOT NULL,
  micros INTEGER NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX key_spend_created ON key_spend (created_at);

CREATE TABLE admin_audit (
  id TEXT PRIMARY KEY,
  actor_key_id TEXT,
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  details TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX admin_audit_created ON admin_audit (created_at);
