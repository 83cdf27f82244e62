-- 015: the LangGraph Platform API's records (docs/langgraph.md): threads, their checkpoints, runs (each one points
-- at the Prism execution that did the work) and long-term store items, one document per row, listed by parent
-- (a thread id, or an item's namespace). `vector` holds a store item's embedding (float32) for semantic search.

CREATE TABLE langgraph_docs (
  org_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('thread', 'checkpoint', 'run', 'item')),
  id TEXT NOT NULL,
  parent TEXT NOT NULL,
  body_json TEXT NOT NULL,
  vector BLOB,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  expires_at TEXT,
  PRIMARY KEY (org_id, kind, id)
);
CREATE INDEX langgraph_docs_parent ON langgraph_docs (org_id, kind, parent);
