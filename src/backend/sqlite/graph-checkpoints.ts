/**
 * LangGraph checkpoints in the app's SQLite file, written lean.
 *
 * LangGraph's own SqliteSaver reads fine but writes slowly for a loop that checkpoints every superstep: it prepares
 * its INSERT statements again on every call, deep-copies each checkpoint before serialising it, and serialises
 * through a cycle-safe stringifier. Profiling the agent loop (`node --cpu-prof`, bench `agents`) put about a third
 * of the runtime's own time per step there. This saver keeps SqliteSaver's tables and its readers (getTuple, list,
 * so checkpoints written by either are read by both) and replaces the writers: statements prepared once, the
 * checkpoint serialised straight from LangGraph's object (the write is synchronous, so nothing can change it in
 * between), and plain JSON.stringify for plain values — which is what the agent graphs keep by design. A value
 * JSON cannot carry faithfully (Map, Set, bytes, RegExp, Error) is handed to the standard serializer, so the
 * format read back is the same either way; `undefined` is written as that serializer writes it.
 *
 * A task's pending writes are held in memory and committed in the same transaction as the checkpoint that follows
 * them (one commit per superstep instead of two); any read or delete commits them first. Losing held writes to a
 * crash is the same as crashing just before the task finished: resume re-runs that task from the last checkpoint.
 */
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  WRITES_IDX_MAP,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
} from '@langchain/langgraph-checkpoint';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import type Database from 'better-sqlite3';

/** Thrown inside the replacer when a value needs the standard serializer. */
/** One row of the writes table, held until the next commit. */
interface HeldWrite {
  row: unknown[];
  special: boolean;
}

class NotPlain extends Error {}
const NOT_PLAIN = new NotPlain('a value needs the standard serializer');
const UNDEFINED_RECORD = { lc: 2, type: 'undefined' };

function plainReplacer(_key: string, value: unknown): unknown {
  if (value === undefined) return UNDEFINED_RECORD;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) throw NOT_PLAIN;
  }
  return value;
}

export class LeanSqliteSaver extends SqliteSaver {
  private readonly insertCheckpoint: Database.Statement;
  private readonly replaceWrite: Database.Statement;
  private readonly ignoreWrite: Database.Statement;
  private readonly commit: (rows: HeldWrite[], checkpoint: unknown[] | null) => void;
  private held: HeldWrite[] = [];

  constructor(db: Database.Database) {
    super(db);
    this.setup();
    this.insertCheckpoint = db.prepare(
      'INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, ' +
        'checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    const writeSql = (verb: string) =>
      `INSERT ${verb} INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value) ` +
      'VALUES (?, ?, ?, ?, ?, ?, ?, ?)';
    this.replaceWrite = db.prepare(writeSql('OR REPLACE'));
    this.ignoreWrite = db.prepare(writeSql('OR IGNORE'));
    this.commit = db.transaction((rows: HeldWrite[], checkpoint: unknown[] | null) => {
      for (const { row, special } of rows) (special ? this.replaceWrite : this.ignoreWrite).run(...row);
      if (checkpoint) this.insertCheckpoint.run(...checkpoint);
    });
  }

  /** Commits held writes (before anything reads or deletes). */
  private flush(): void {
    if (this.held.length === 0) return;
    const rows = this.held;
    this.held = [];
    this.commit(rows, null);
  }

  /** JSON text of a value, as the standard serializer would read it back. */
  private async dump(value: unknown): Promise<[string, string | Uint8Array]> {
    try {
      return ['json', JSON.stringify(value, plainReplacer)];
    } catch (error) {
      if (error !== NOT_PLAIN) throw error;
      return this.serde.dumpsTyped(value);
    }
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
  ): Promise<RunnableConfig> {
    const threadId = config.configurable?.thread_id as string | undefined;
    if (!threadId) throw new Error('Missing "thread_id" field in passed "config.configurable".');
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? '';
    const parentId = config.configurable?.checkpoint_id as string | undefined;
    const [type, body] = await this.dump(checkpoint);
    const [, meta] = await this.dump(metadata);
    const rows = this.held;
    this.held = [];
    this.commit(rows, [threadId, ns, checkpoint.id, parentId ?? null, type, body, meta]);
    return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    const threadId = config.configurable?.thread_id as string | undefined;
    const checkpointId = config.configurable?.checkpoint_id as string | undefined;
    if (!threadId || !checkpointId) throw new Error('Missing thread_id or checkpoint_id in config.configurable.');
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? '';
    const special = writes.every(([channel]) => channel in WRITES_IDX_MAP);
    let idx = 0;
    for (const [channel, value] of writes) {
      const [type, body] = await this.dump(value);
      const row = [threadId, ns, checkpointId, taskId, WRITES_IDX_MAP[channel] ?? idx, channel, type, body];
      this.held.push({ row, special });
      idx += 1;
    }
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    this.flush();
    return super.getTuple(config);
  }

  override list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    this.flush();
    return super.list(config, options);
  }

  override async deleteThread(threadId: string): Promise<void> {
    this.flush();
    await super.deleteThread(threadId);
  }
}
