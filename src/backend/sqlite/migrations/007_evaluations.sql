-- 007: evaluation runs (a run compares stored responses with feedback; a rerun re-processes a run's items with
-- another skill and scores them again) and the per-item details of each run.

CREATE TABLE evaluations (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('run', 'rerun')),
  -- The run a rerun re-processes; null for a plain run.
  parent_id TEXT REFERENCES evaluations (id) ON DELETE SET NULL,
  source_type TEXT NOT NULL CHECK (source_type IN ('agent', 'request_domain', 'skill')),
  source_id TEXT NOT NULL,
  source_label TEXT NOT NULL,
  source_version TEXT,
  status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed')),
  -- Evaluators, options (infer_corrections, skip_null_expected, fuzzy_threshold, the rerun's skill).
  config_json TEXT NOT NULL,
  accuracy REAL,
  api_completion_rate REAL,
  total_items INTEGER NOT NULL DEFAULT 0,
  total_with_feedback INTEGER NOT NULL DEFAULT 0,
  data_from TEXT,
  data_to TEXT,
  results_json TEXT NOT NULL DEFAULT '{}',
  error_message TEXT,
  created_at TEXT NOT NULL,
  completed_at TEXT
);
CREATE INDEX evaluations_org_created ON evaluations (org_id, created_at DESC);
CREATE INDEX evaluations_status ON evaluations (status);

-- One row per item of a run: the stored response it was scored on, the expected values and each evaluator's verdict.
CREATE TABLE evaluation_items (
  evaluation_id TEXT NOT NULL REFERENCES evaluations (id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  entity_type TEXT NOT NULL CHECK (entity_type IN ('request', 'agent_execution')),
  entity_id TEXT NOT NULL,
  detail_json TEXT NOT NULL,
  PRIMARY KEY (evaluation_id, position)
);
