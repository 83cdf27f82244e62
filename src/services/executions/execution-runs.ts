/**
 * What the executions service's use cases share about runs in this process: the abort controller of each run going
 * on, the wallet hold of each accepted run until it settles (a restart forgets them), the runs to resume from their
 * checkpoint, and whether a shutdown is stopping them.
 */
import type { ExecutionHold } from './execution-usage';

export interface ExecutionRuns {
  running: Map<string, AbortController>;
  /** Wallet holds of accepted runs, by execution id, from `execute` until the run settles. */
  holds: Map<string, ExecutionHold>;
  /** Runs a restart interrupted after a checkpoint: their next start resumes it. */
  resumable: Set<string>;
  shuttingDown: boolean;
  /** Gives an execution's hold back, if it still has one (the run ended without a bill, or was stopped). */
  releaseHold: (id: string) => void;
}

export function createExecutionRuns(): ExecutionRuns {
  const holds = new Map<string, ExecutionHold>();
  return {
    running: new Map(),
    holds,
    resumable: new Set(),
    shuttingDown: false,
    releaseHold: (id) => {
      holds.get(id)?.release();
      holds.delete(id);
    },
  };
}
