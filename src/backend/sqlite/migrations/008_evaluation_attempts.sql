-- Issue 27: evaluations count their starts like predictions and executions do, so one that was running when the
-- process died is resumed at most once (a run that keeps stopping the server is failed, not started again).
ALTER TABLE evaluations ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
