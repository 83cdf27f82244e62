-- 005: named agents, agent executions, the artifacts tools write, and compiled skill programs.
-- LangGraph's own checkpoint tables (`checkpoints`, `writes`) are created by its SqliteSaver in the same file.

CREATE TABLE agents (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  version TEXT NOT NULL,
  description TEXT,
  -- The agent's config as created: prompt, json_schema, skills, tools, service_tier, mode.
  config_json TEXT NOT NULL,
  inputs_json TEXT,
  created_at TEXT NOT NULL,
  UNIQUE (org_id, name, version)
);
CREATE INDEX agents_org_created ON agents (org_id, created_at DESC);

CREATE TABLE executions (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  agent_id TEXT REFERENCES agents (id) ON DELETE SET NULL,
  name TEXT NOT NULL,
  model TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'enqueued', 'running', 'completed', 'failed', 'paused')),
  execution_mode TEXT NOT NULL CHECK (execution_mode IN ('agent', 'program')),
  -- The normalised request (inputs as references, config, metadata): enough to run or resume the execution.
  request_json TEXT NOT NULL,
  response_json TEXT,
  usage_json TEXT NOT NULL,
  -- What each loop step did (planner turn or tool call), for GET and for compiling programs.
  steps_json TEXT NOT NULL DEFAULT '[]',
  error_message TEXT,
  callback_url TEXT,
  session_id TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  completed_at TEXT
);
CREATE INDEX executions_org_created ON executions (org_id, created_at DESC);
CREATE INDEX executions_status ON executions (status);

CREATE TABLE execution_webhook_deliveries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  execution_id TEXT NOT NULL REFERENCES executions (id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  status_code INTEGER,
  outcome TEXT NOT NULL CHECK (outcome IN ('delivered', 'failed', 'gave_up')),
  error TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX execution_webhook_deliveries_execution ON execution_webhook_deliveries (execution_id, id);

-- Bytes tools wrote (page renders, frames, OCR text, layouts, CSV, JSON) and inputs a run stored; the blob row keeps
-- the bytes alive through the start-up sweep.
CREATE TABLE artifacts (
  object_id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  execution_id TEXT,
  session_id TEXT,
  kind TEXT NOT NULL,
  filename TEXT NOT NULL,
  mime_type TEXT NOT NULL,
  sha256 TEXT NOT NULL REFERENCES blobs (sha256),
  size_bytes INTEGER NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX artifacts_execution ON artifacts (org_id, execution_id, created_at);
CREATE INDEX artifacts_session ON artifacts (org_id, session_id, created_at);
CREATE INDEX artifacts_sha256 ON artifacts (sha256);

-- A compiled program per skill version and input-slot signature, usable once verified by a replay.
CREATE TABLE skill_programs (
  skill_id TEXT NOT NULL,
  skill_version TEXT NOT NULL,
  signature TEXT NOT NULL,
  program_json TEXT NOT NULL,
  source_execution_id TEXT,
  verified_at TEXT,
  created_at TEXT NOT NULL,
  PRIMARY KEY (skill_id, skill_version, signature)
);
