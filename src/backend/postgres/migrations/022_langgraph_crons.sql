-- 022: LangGraph crons (mirrors sqlite/migrations/022_langgraph_crons.sql): a replica claims a firing by moving
-- `next_run_at` forward with an UPDATE conditional on the value it read; NULL: disabled or past its end.

CREATE TABLE langgraph_crons (
  cron_id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  thread_id TEXT,
  body_json JSONB NOT NULL,
  next_run_at TIMESTAMPTZ,
  created_at TIMESTAMPTZ NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX langgraph_crons_org ON langgraph_crons (org_id, created_at);
CREATE INDEX langgraph_crons_due ON langgraph_crons (next_run_at);
