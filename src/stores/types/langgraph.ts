/**
 * The LangGraph Platform API's own records (docs/langgraph.md): threads, their checkpoints, runs and long-term store
 * items. One document table keeps them all (kind, id, parent), because each is read whole by id or listed by its
 * parent; the runs' work itself stays in executions and the graph's in its LangGraph checkpoints.
 */

export type LangGraphDocKind = 'thread' | 'checkpoint' | 'run' | 'item';

export interface LangGraphDoc {
  orgId: string;
  kind: LangGraphDocKind;
  id: string;
  /** Thread id for checkpoints and runs; the namespace (labels joined by '.') for items; '' for threads. */
  parent: string;
  body: Record<string, unknown>;
  /** A unit vector for store items indexed for semantic search (little-endian float32), else null. */
  vector: Float32Array | null;
  createdAt: Date;
  updatedAt: Date;
  /** Store items with a TTL: reads past it see nothing (and the row is removed on the next write). */
  expiresAt: Date | null;
}

export interface LangGraphStore extends LangGraphCronStore {
  /** Inserts or replaces the document (org, kind, id). */
  put(doc: LangGraphDoc): Promise<void>;
  get(orgId: string, kind: LangGraphDocKind, id: string): Promise<LangGraphDoc | null>;
  /** @returns false when there was nothing to delete. */
  delete(orgId: string, kind: LangGraphDocKind, id: string): Promise<boolean>;
  /** Deletes every document of that kind under `parent` (a thread's checkpoints and runs). */
  deleteChildren(orgId: string, kind: LangGraphDocKind, parent: string): Promise<void>;
  /**
   * Documents of a kind, oldest first; `parent` exact, or `parentPrefix` (an item namespace prefix: the parent equals
   * it or starts with it followed by '.'). Expired documents are left out.
   */
  list(
    orgId: string,
    kind: LangGraphDocKind,
    where: { parent?: string; parentPrefix?: string },
    now: Date,
  ): Promise<LangGraphDoc[]>;
}

/** A LangGraph cron (migration 022): its API record in `body`, its next firing in `nextRunAt`. */
export interface LangGraphCronRecord {
  cronId: string;
  orgId: string;
  /** The thread each firing runs on; null: a new thread each time. */
  threadId: string | null;
  body: Record<string, unknown>;
  /** The next firing; null when disabled or past its end time. */
  nextRunAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface LangGraphCronStore {
  /** Inserts or replaces the cron. */
  putCron(cron: LangGraphCronRecord): Promise<void>;
  getCron(orgId: string, cronId: string): Promise<LangGraphCronRecord | null>;
  /** @returns false when there was nothing to delete. */
  deleteCron(orgId: string, cronId: string): Promise<boolean>;
  /** The organisation's crons, oldest first. */
  listCrons(orgId: string): Promise<LangGraphCronRecord[]>;
  /** Crons of every organisation whose next firing is at or before `now`, soonest first, at most `limit`. */
  dueCrons(now: Date, limit: number): Promise<LangGraphCronRecord[]>;
  /**
   * Claims the firing at `due`: moves the cron's next firing to `next` only while it still is `due`.
   * @returns true for the one caller (of any replica) whose update changed the row.
   */
  claimCron(cronId: string, due: Date, next: Date | null, now: Date): Promise<boolean>;
}
