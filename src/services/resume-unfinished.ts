/**
 * The restart sweep, written once for predictions and executions: every unfinished record goes back to the job
 * queue, unless its kind's `reclaim` fails it (interrupted too often, or an execution with nothing to resume from).
 * With a shared queue (Redis) a `running` record belongs to a live replica and is left alone (`takeOverRunning:
 * false`); the queue's lease hands a dead replica's work over instead.
 */

export interface ResumeOptions {
  takeOverRunning?: boolean;
}

export interface ResumeCount {
  resumed: number;
  failed: number;
}

/** What the sweep needs of a kind: its unfinished records, how one is made runnable again, and the queue. */
export interface Resumable<T extends { id: string; status: string }> {
  unfinished(): Promise<T[]>;
  /** Makes the record runnable again (`enqueued`), or fails it; whether it may run. */
  reclaim(record: T): Promise<boolean>;
  enqueue(id: string): void;
}

export async function resumeUnfinished<T extends { id: string; status: string }>(
  kind: Resumable<T>,
  { takeOverRunning = true }: ResumeOptions = {},
): Promise<ResumeCount> {
  let resumed = 0;
  let failed = 0;
  for (const record of await kind.unfinished()) {
    if (!takeOverRunning && record.status === 'running') continue;
    if (!(await kind.reclaim(record))) {
      failed += 1;
      continue;
    }
    kind.enqueue(record.id);
    resumed += 1;
  }
  return { resumed, failed };
}
