-- 029: the indexes the stores need at a million rows (mirrors postgres/migrations/029_store_indexes_at_size.sql).
-- key_spend_key: a key's spend (the admin key view sums it on every read of a key) read the whole spend ledger;
--   with (key_id, micros) it reads that key's rows from the index alone.
-- executions_stalled: the stalled-run sweep (status = 'running' AND updated_at < cutoff) ordered as it reads.

CREATE INDEX key_spend_key ON key_spend (key_id, micros);
CREATE INDEX executions_stalled ON executions (updated_at) WHERE status = 'running';
