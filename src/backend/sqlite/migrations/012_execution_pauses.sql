-- 012: agent runs that pause for a person (docs/agent-runs.md). `pause_json` says what a `paused` execution waits
-- for (the tool call and its arguments, or a skill-graph state's question) and when the wait expires; null
-- otherwise. The run's own state stays in its LangGraph checkpoint.

ALTER TABLE executions ADD COLUMN pause_json TEXT;
CREATE INDEX executions_paused ON executions (status) WHERE status = 'paused';
