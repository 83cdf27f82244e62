-- 005: named agents, agent executions, artifacts, compiled skill programs (mirrors sqlite/migrations/005_agents.sql).
-- LangGraph's checkpoint tables live in their own schema (`<schema>_checkpoints`), created by PostgresSaver.setup().

CREATE TABLE agents (
  seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  version TEXT NOT NULL,
  description TEXT,
  -- Holds the agent's JSON schema, whose key order orders its responses: json, not jsonb.
  config_json JSON NOT NULL,
  inputs_json JSON,
  created_at TIMESTAMPTZ NOT NULL,
  UNIQUE (org_id, name, version)
);
CREATE INDEX agents_org_created ON agents (org_id, created_at DESC, seq DESC);
CREATE INDEX agents_org_name ON agents (org_id, name, created_at DESC, seq DESC);

CREATE TABLE executions (
  seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  agent_id TEXT REFERENCES agents (id) ON DELETE SET NULL,
  name TEXT NOT NULL,
  model TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'enqueued', 'running', 'completed', 'failed', 'paused')),
  execution_mode TEXT NOT NULL CHECK (execution_mode IN ('agent', 'program')),
  request_json JSON NOT NULL,
  response_json JSON,
  usage_json JSONB NOT NULL,
  steps_json JSONB NOT NULL DEFAULT '[]',
  error_message TEXT,
  callback_url TEXT,
  session_id TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at TIMESTAMPTZ NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL,
  completed_at TIMESTAMPTZ
);
CREATE INDEX executions_org_created ON executions (org_id, created_at DESC, seq DESC);
CREATE INDEX executions_agent ON executions (agent_id, created_at DESC);
CREATE INDEX executions_unfinished ON executions (created_at, seq) WHERE status IN ('pending', 'enqueued', 'running');

CREATE TABLE execution_webhook_deliveries (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  execution_id TEXT NOT NULL REFERENCES executions (id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  status_code INTEGER,
  outcome TEXT NOT NULL CHECK (outcome IN ('delivered', 'failed', 'gave_up')),
  error TEXT,
  created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX execution_webhook_deliveries_execution ON execution_webhook_deliveries (execution_id, id);

CREATE TABLE artifacts (
  seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  object_id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  execution_id TEXT,
  session_id TEXT,
  kind TEXT NOT NULL,
  filename TEXT NOT NULL,
  mime_type TEXT NOT NULL,
  sha256 TEXT NOT NULL REFERENCES blobs (sha256),
  size_bytes BIGINT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX artifacts_execution ON artifacts (org_id, execution_id, created_at, seq);
CREATE INDEX artifacts_session ON artifacts (org_id, session_id, created_at, seq);
CREATE INDEX artifacts_sha256 ON artifacts (sha256);

CREATE TABLE skill_programs (
  skill_id TEXT NOT NULL,
  skill_version TEXT NOT NULL,
  signature TEXT NOT NULL,
  program_json JSON NOT NULL,
  source_execution_id TEXT,
  verified_at TIMESTAMPTZ,
  created_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (skill_id, skill_version, signature)
);
