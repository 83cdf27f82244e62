/**
 * When the agent loop writes each step's checkpoint, chosen per records backend.
 *
 * LangGraph offers `sync` (the step's checkpoint is written before the next step starts) and `async` (it is written
 * while the next step runs, and the run waits for it before it ends). `sync` is what several replicas sharing
 * PostgreSQL need: a replica killed during a planner call leaves the checkpoint of the tool that ran, so the replica
 * that takes the run over resumes after it, never before (a17c708; the multi-replica suite saw the difference).
 * A single-user SQLite file has one serving process and LeanSqliteSaver writes synchronously anyway: the checkpoint
 * is in the file by the time `put` returns, so `async` loses nothing on a crash that `sync` would keep, and it saves
 * the await chain LangGraph puts between steps in `sync` mode (bench `agents`, loop overhead per step).
 */
import type { Dialect } from '../backend/types';

export type CheckpointDurability = 'sync' | 'async';

export function checkpointDurabilityFor(dialect: Dialect): CheckpointDurability {
  return dialect === 'postgres' ? 'sync' : 'async';
}
