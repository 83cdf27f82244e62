-- 029: the indexes the stores need at a million rows (issue 43; bench `stores-size` measures each operation with and
-- without them in one run, docs/postgres.md shows the plans).
-- key_spend_key: a key's spend (the admin key view sums it on every read of a key) read the whole spend ledger:
--   175 ms at 1M rows; with (key_id, micros) it is an index-only scan of that key's rows.
-- executions_stalled: the stalled-run sweep (status = 'running' AND updated_at < cutoff, every few seconds on every
--   replica) filtered every unfinished row through executions_unfinished; partial on the running rows, ordered as the
--   sweep reads them.
-- The bench drops and re-creates exactly the indexes this file names: keep it to CREATE INDEX statements.

CREATE INDEX key_spend_key ON key_spend (key_id, micros);
CREATE INDEX executions_stalled ON executions (updated_at, seq) WHERE status = 'running';
