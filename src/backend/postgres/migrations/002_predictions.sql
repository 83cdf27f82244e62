-- 002: predictions, their inputs and webhook deliveries, feedback (mirrors sqlite/migrations/002_predictions.sql).
-- `json` (text kept as sent) where key order is the caller's: the request (its JSON schema orders the response) and
-- responses; `jsonb` where only Prism reads the value.

CREATE TABLE predictions (
  seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('image', 'document', 'video', 'audio', 'image_schema')),
  model TEXT NOT NULL,
  domain TEXT,
  status TEXT NOT NULL CHECK (status IN ('pending', 'enqueued', 'running', 'completed', 'failed', 'paused')),
  request_json JSON NOT NULL,
  inputs_json JSONB NOT NULL DEFAULT '[]',
  response_json JSON,
  usage_json JSONB NOT NULL,
  error_message TEXT,
  callback_url TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at TIMESTAMPTZ NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL,
  completed_at TIMESTAMPTZ
);
CREATE INDEX predictions_org_created ON predictions (org_id, created_at DESC, seq DESC);
CREATE INDEX predictions_org_domain ON predictions (org_id, domain, created_at DESC);
-- Only unfinished rows: the restart sweep reads them, and they are few.
CREATE INDEX predictions_unfinished ON predictions (created_at, seq) WHERE status IN ('pending', 'enqueued', 'running');

CREATE TABLE prediction_inputs (
  prediction_id TEXT NOT NULL REFERENCES predictions (id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  sha256 TEXT NOT NULL REFERENCES blobs (sha256),
  content_type TEXT NOT NULL,
  filename TEXT,
  PRIMARY KEY (prediction_id, position)
);
CREATE INDEX prediction_inputs_sha256 ON prediction_inputs (sha256);

CREATE TABLE webhook_deliveries (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  prediction_id TEXT NOT NULL REFERENCES predictions (id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  status_code INTEGER,
  outcome TEXT NOT NULL CHECK (outcome IN ('delivered', 'failed', 'gave_up')),
  error TEXT,
  created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhook_deliveries_prediction ON webhook_deliveries (prediction_id, id);

CREATE TABLE feedback (
  seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  entity_type TEXT NOT NULL CHECK (entity_type IN ('request', 'agent_execution', 'chat')),
  entity_id TEXT NOT NULL,
  response_json JSON,
  notes TEXT,
  created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX feedback_entity ON feedback (org_id, entity_type, entity_id, created_at DESC, seq DESC);
