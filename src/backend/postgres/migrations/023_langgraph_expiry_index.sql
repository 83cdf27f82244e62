-- 023: an index on when LangGraph documents expire (mirrors sqlite/migrations/023_langgraph_expiry_index.sql): the
-- delete of expired documents that precedes every put reads only documents with a TTL instead of the whole table.

CREATE INDEX langgraph_docs_expiry ON langgraph_docs (expires_at) WHERE expires_at IS NOT NULL;
