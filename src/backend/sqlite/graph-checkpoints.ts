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
 * A task's pending writes are held in memory, unserialised, and committed in the same transaction as its thread's
 * next checkpoint (one commit per superstep instead of two); any read or delete commits them first. Losing held
 * writes to a crash is the same as crashing just before the task finished: resume re-runs that task from the last
 * checkpoint. A held write against the very checkpoint the new one follows is not written at all: LangGraph made the
 * new checkpoint by applying those writes, so they only matter while their checkpoint is the thread's latest, which
 * ends in the same transaction. Writes a later read needs are always kept: errors, interrupts, resumes, scheduled
 * tasks, and `__pregel_tasks` (the next checkpoint's pending sends are read from its parent's writes).
 *
 * Checkpoint text is assembled from cached pieces: the loop's list channels (messages, trace) only grow, by
 * reducers that copy the list and never change an element, so each element's JSON is made once per run instead of
 * once per superstep (a WeakMap keyed by the element). The text is what JSON.stringify would make of the whole
 * checkpoint (test/unit/agents/graph-checkpoints.test.ts checks it on the checkpoints of a real loop run).
 */
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  TASKS,
  WRITES_IDX_MAP,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
} from '@langchain/langgraph-checkpoint';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import type Database from 'better-sqlite3';

/** One row of the writes table, held (its value not yet serialised) until the next commit. */
interface HeldWrite {
  threadId: string;
  ns: string;
  checkpointId: string;
  taskId: string;
  idx: number;
  channel: string;
  value: unknown;
  /** Written with REPLACE (a write of LangGraph's own channels) rather than IGNORE, as SqliteSaver does. */
  special: boolean;
}

/** Thrown inside the replacer when a value needs the standard serializer. */
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

/** JSON text of each list element already written, by element (elements are never changed once in the state). */
const elementText = new WeakMap<object, string>();

/** JSON.stringify(list, plainReplacer), reusing each object element's text. */
function listText(list: unknown[]): string {
  const parts: string[] = [];
  for (let i = 0; i < list.length; i += 1) {
    const element = list[i];
    if (typeof element !== 'object' || element === null) {
      parts.push(JSON.stringify(element, plainReplacer) ?? 'null');
      continue;
    }
    let text = elementText.get(element);
    if (text === undefined) {
      text = JSON.stringify(element, plainReplacer);
      elementText.set(element, text);
    }
    parts.push(text);
  }
  return `[${parts.join(',')}]`;
}

const plainText = (value: unknown): string => JSON.stringify(value, plainReplacer);

/** JSON.stringify(object, plainReplacer) for a plain object, each value's text made by `textOf`. */
function objectText(value: object, textOf: (key: string, item: unknown) => string): string {
  plainReplacer('', value);
  const parts: string[] = [];
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === 'function' || typeof item === 'symbol') continue;
    parts.push(`${JSON.stringify(key)}:${textOf(key, item)}`);
  }
  return `{${parts.join(',')}}`;
}

/** JSON text of a checkpoint, its channel values' list elements reused from earlier checkpoints of the run. */
export function checkpointText(checkpoint: Checkpoint): string {
  return objectText(checkpoint, (key, item) =>
    key === 'channel_values' && typeof item === 'object' && item !== null && !Array.isArray(item)
      ? objectText(item, (_channel, value) => (Array.isArray(value) ? listText(value) : plainText(value)))
      : plainText(item),
  );
}

/** Whether a pending write must be kept once its checkpoint has a successor (see the header). */
function neededAfterSuccessor(channel: string): boolean {
  return channel in WRITES_IDX_MAP || channel === TASKS;
}

export class LeanSqliteSaver extends SqliteSaver {
  private readonly insertCheckpoint: Database.Statement;
  private readonly replaceWrite: Database.Statement;
  private readonly ignoreWrite: Database.Statement;
  private readonly commit: (rows: unknown[][], checkpoint: unknown[] | null) => void;
  /** SqliteSaver's deleteThread, its statements and transaction prepared once (it runs after every execution). */
  private readonly deleteRows: (threadId: string) => void;
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
    this.commit = db.transaction((rows: unknown[][], checkpoint: unknown[] | null) => {
      for (const row of rows) (row.pop() ? this.replaceWrite : this.ignoreWrite).run(...row);
      if (checkpoint) this.insertCheckpoint.run(...checkpoint);
    });
    const deleteCheckpoints = db.prepare('DELETE FROM checkpoints WHERE thread_id = ?');
    const deleteWrites = db.prepare('DELETE FROM writes WHERE thread_id = ?');
    this.deleteRows = db.transaction((threadId: string) => {
      deleteCheckpoints.run(threadId);
      deleteWrites.run(threadId);
    });
  }

  /** Commits held writes (before anything reads or deletes). */
  private async flush(): Promise<void> {
    if (this.held.length === 0) return;
    const held = this.held;
    this.held = [];
    this.commit(await this.rowsOf(held), null);
  }

  /** The writes table's rows for held writes, each ending with its `special` flag (the statement to use). */
  private async rowsOf(held: HeldWrite[]): Promise<unknown[][]> {
    const rows: unknown[][] = [];
    for (const w of held) {
      const [type, body] = await this.dump(w.value);
      rows.push([w.threadId, w.ns, w.checkpointId, w.taskId, w.idx, w.channel, type, body, w.special]);
    }
    return rows;
  }

  /** JSON text of a value, as the standard serializer would read it back. */
  private async dump(
    value: unknown,
    text = (v: unknown) => JSON.stringify(v, plainReplacer),
  ): Promise<[string, string | Uint8Array]> {
    try {
      return ['json', text(value)];
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
    const [type, body] = await this.dump(checkpoint, (c) => checkpointText(c as Checkpoint));
    const [, meta] = await this.dump(metadata);
    // This thread's held writes go with its checkpoint, except those against the checkpoint this one follows: they
    // are in it already, and only the ones a reader needs are kept. Other threads' writes wait for their own.
    const mine: HeldWrite[] = [];
    const others: HeldWrite[] = [];
    for (const w of this.held) (w.threadId === threadId && w.ns === ns ? mine : others).push(w);
    const kept = mine.filter((w) => w.checkpointId !== parentId || neededAfterSuccessor(w.channel));
    this.held = others;
    this.commit(await this.rowsOf(kept), [threadId, ns, checkpoint.id, parentId ?? null, type, body, meta]);
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
      this.held.push({
        threadId,
        ns,
        checkpointId,
        taskId,
        idx: WRITES_IDX_MAP[channel] ?? idx,
        channel,
        value,
        special,
      });
      idx += 1;
    }
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    await this.flush();
    return super.getTuple(config);
  }

  override async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    await this.flush();
    yield* super.list(config, options);
  }

  override async deleteThread(threadId: string): Promise<void> {
    await this.flush();
    this.deleteRows(threadId);
  }
}
