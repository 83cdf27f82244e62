-- 023: an index on when LangGraph documents expire. Every store put (threads, checkpoints, runs and store items)
-- first deletes expired documents; without this index that delete read the whole table, so each put cost time in
-- proportion to everything ever stored (bench `langgraph`: filling 100k store items did not finish in 10 minutes).
-- Partial: only documents with a TTL are in it, and the delete's own condition selects them.

CREATE INDEX langgraph_docs_expiry ON langgraph_docs (expires_at) WHERE expires_at IS NOT NULL;
