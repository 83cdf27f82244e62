-- 007: evaluation runs and their per-item details (mirrors sqlite/migrations/007_evaluations.sql).

CREATE TABLE evaluations (
  seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('run', 'rerun')),
  parent_id TEXT REFERENCES evaluations (id) ON DELETE SET NULL,
  source_type TEXT NOT NULL CHECK (source_type IN ('agent', 'request_domain', 'skill')),
  source_id TEXT NOT NULL,
  source_label TEXT NOT NULL,
  source_version TEXT,
  status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed')),
  config_json JSONB NOT NULL,
  accuracy DOUBLE PRECISION,
  api_completion_rate DOUBLE PRECISION,
  total_items INTEGER NOT NULL DEFAULT 0,
  total_with_feedback INTEGER NOT NULL DEFAULT 0,
  data_from TIMESTAMPTZ,
  data_to TIMESTAMPTZ,
  results_json JSON NOT NULL DEFAULT '{}',
  error_message TEXT,
  created_at TIMESTAMPTZ NOT NULL,
  completed_at TIMESTAMPTZ
);
CREATE INDEX evaluations_org_created ON evaluations (org_id, created_at DESC, seq DESC);
CREATE INDEX evaluations_unfinished ON evaluations (status) WHERE status IN ('pending', 'running');

CREATE TABLE evaluation_items (
  evaluation_id TEXT NOT NULL REFERENCES evaluations (id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  entity_type TEXT NOT NULL CHECK (entity_type IN ('request', 'agent_execution')),
  entity_id TEXT NOT NULL,
  detail_json JSON NOT NULL,
  PRIMARY KEY (evaluation_id, position)
);
