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

export interface LangGraphStore {
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
