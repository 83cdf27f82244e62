-- 008: evaluations count their starts (mirrors sqlite/migrations/008_evaluation_attempts.sql), so one that was
-- running when the process died is resumed at most once (src/domain/restart-policy.ts).
ALTER TABLE evaluations ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
