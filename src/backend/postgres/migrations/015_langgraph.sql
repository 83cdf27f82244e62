-- 015: the LangGraph Platform API's records (mirrors sqlite/migrations/015_langgraph.sql): threads, checkpoints,
-- runs and long-term store items, one document per row, listed by parent; `vector` a store item's embedding.

CREATE TABLE langgraph_docs (
  seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  org_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('thread', 'checkpoint', 'run', 'item')),
  id TEXT NOT NULL,
  parent TEXT NOT NULL,
  body_json JSONB NOT NULL,
  vector BYTEA,
  created_at TIMESTAMPTZ NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL,
  expires_at TIMESTAMPTZ,
  PRIMARY KEY (org_id, kind, id)
);
CREATE INDEX langgraph_docs_parent ON langgraph_docs (org_id, kind, parent text_pattern_ops);
