-- 022: LangGraph crons (docs/langgraph.md): schedules that start runs on a thread or on a new thread each time.
-- `next_run_at` is the next firing (NULL: disabled or past its end); a replica claims a firing by moving it forward
-- with an UPDATE conditional on the value it read, so on several replicas each firing starts one run.
-- `body_json` holds the cron as the API shows it and the owner its runs are billed to.

CREATE TABLE langgraph_crons (
  cron_id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  thread_id TEXT,
  body_json TEXT NOT NULL,
  next_run_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX langgraph_crons_org ON langgraph_crons (org_id, created_at);
CREATE INDEX langgraph_crons_due ON langgraph_crons (next_run_at);
