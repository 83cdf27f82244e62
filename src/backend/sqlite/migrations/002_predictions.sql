-- Predictions (generate requests), their webhook deliveries, and feedback on any request, execution or chat.

CREATE TABLE predictions (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('image', 'document', 'video', 'audio', 'image_schema')),
  model TEXT NOT NULL,
  domain TEXT,
  status TEXT NOT NULL CHECK (status IN ('pending', 'enqueued', 'running', 'completed', 'failed', 'paused')),
  -- The normalised request (config, metadata, input references); enough to run or resume the job.
  request_json TEXT NOT NULL,
  -- Content-addressed inputs the job reads (blob sha256 list as JSON); they are referenced so the sweep keeps them.
  inputs_json TEXT NOT NULL DEFAULT '[]',
  response_json TEXT,
  usage_json TEXT NOT NULL,
  error_message TEXT,
  callback_url TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  completed_at TEXT
);
CREATE INDEX predictions_org_created ON predictions (org_id, created_at DESC);
CREATE INDEX predictions_status ON predictions (status);

-- Blobs a prediction keeps alive (its inputs), so the start-up sweep never removes them.
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
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  prediction_id TEXT NOT NULL REFERENCES predictions (id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  status_code INTEGER,
  outcome TEXT NOT NULL CHECK (outcome IN ('delivered', 'failed', 'gave_up')),
  error TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX webhook_deliveries_prediction ON webhook_deliveries (prediction_id, id);

CREATE TABLE feedback (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  entity_type TEXT NOT NULL CHECK (entity_type IN ('request', 'agent_execution', 'chat')),
  entity_id TEXT NOT NULL,
  response_json TEXT,
  notes TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX feedback_entity ON feedback (org_id, entity_type, entity_id, created_at);
