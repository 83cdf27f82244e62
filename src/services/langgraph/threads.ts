/**
 * LangGraph threads on Prism (docs/langgraph.md): a thread is a stored conversation whose every change is a
 * checkpoint (its values, parent and metadata), so history, state at a checkpoint, update state, copy and forks
 * from an earlier checkpoint all read the same records. Org-scoped: another organisation's thread is a 404.
 */
import { randomUUID } from 'node:crypto';
import { BadRequestError, NotFoundError } from '../../domain/errors';
import type { LangGraphDoc, LangGraphStore } from '../../stores/types';
import { applyInput, type LgState } from './langgraph-state';

export type ThreadStatus = 'idle' | 'busy' | 'interrupted' | 'error';

export interface ThreadWire {
  thread_id: string;
  created_at: string;
  updated_at: string;
  metadata: Record<string, unknown>;
  status: ThreadStatus;
  values: LgState;
  interrupts: Record<string, unknown[]>;
  /** The newest checkpoint (the thread's head); null before the first. */
  head: string | null;
}

export interface CheckpointWire {
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  values: LgState;
  next: string[];
  metadata: Record<string, unknown>;
  tasks: Record<string, unknown>[];
  created_at: string;
}

export interface ThreadStateWire {
  values: LgState;
  next: string[];
  checkpoint: { thread_id: string; checkpoint_ns: string; checkpoint_id: string | null; checkpoint_map: null };
  metadata: Record<string, unknown>;
  created_at: string | null;
  parent_checkpoint: { thread_id: string; checkpoint_ns: string; checkpoint_id: string; checkpoint_map: null } | null;
  tasks: Record<string, unknown>[];
}

export const EMPTY_STATE: LgState = { messages: [] };

const now = (): Date => new Date();

const ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function checkId(value: string, what: string): string {
  if (!ID.test(value)) throw new BadRequestError(`${what} must be 1-128 letters, digits, '.', '_', ':' or '-'.`);
  return value;
}

export function createThreads(store: LangGraphStore): LangGraphThreads {
  return new LangGraphThreads(store);
}

/** The threads of the LangGraph API and their checkpoints, kept as documents of the LangGraph store. */
export class LangGraphThreads {
  constructor(private readonly store: LangGraphStore) {}

  private doc(orgId: string, thread: ThreadWire, createdAt: Date): LangGraphDoc {
    return {
      orgId,
      kind: 'thread',
      id: thread.thread_id,
      parent: '',
      body: thread as unknown as Record<string, unknown>,
      vector: null,
      createdAt,
      updatedAt: new Date(thread.updated_at),
      expiresAt: null,
    };
  }

  async save(orgId: string, thread: ThreadWire): Promise<ThreadWire> {
    thread.updated_at = now().toISOString();
    await this.store.put(this.doc(orgId, thread, new Date(thread.created_at)));
    return thread;
  }

  async get(orgId: string, threadId: string): Promise<ThreadWire> {
    const found = await this.store.get(orgId, 'thread', threadId);
    if (!found) throw new NotFoundError('thread', threadId);
    return found.body as unknown as ThreadWire;
  }

  async checkpoints(orgId: string, threadId: string): Promise<CheckpointWire[]> {
    const found = await this.store.list(orgId, 'checkpoint', { parent: threadId }, now());
    return found.map((d) => d.body as unknown as CheckpointWire);
  }

  async checkpoint(orgId: string, threadId: string, checkpointId: string): Promise<CheckpointWire> {
    const found = await this.store.get(orgId, 'checkpoint', `${threadId}/${checkpointId}`);
    if (!found || found.parent !== threadId) throw new NotFoundError('checkpoint', checkpointId);
    return found.body as unknown as CheckpointWire;
  }

  /** Records a new checkpoint after `parent` and makes it the thread's head with its values. */
  async commit(
    orgId: string,
    thread: ThreadWire,
    values: LgState,
    meta: { source: string; step?: number; writes?: unknown; run_id?: string },
    parent: string | null = thread.head,
    next: string[] = [],
    tasks: Record<string, unknown>[] = [],
  ): Promise<CheckpointWire> {
    const at = now();
    const cp: CheckpointWire = {
      checkpoint_id: `${at.getTime().toString(36).padStart(9, '0')}-${randomUUID()}`,
      parent_checkpoint_id: parent,
      values,
      next,
      metadata: { ...thread.metadata, ...meta, step: meta.step ?? -1, parents: {} },
      tasks,
      created_at: at.toISOString(),
    };
    await this.store.put({
      orgId,
      kind: 'checkpoint',
      id: `${thread.thread_id}/${cp.checkpoint_id}`,
      parent: thread.thread_id,
      body: cp as unknown as Record<string, unknown>,
      vector: null,
      createdAt: at,
      updatedAt: at,
      expiresAt: null,
    });
    thread.values = values;
    thread.head = cp.checkpoint_id;
    await this.save(orgId, thread);
    return cp;
  }

  stateOf(threadId: string, cp: CheckpointWire | null, thread?: ThreadWire): ThreadStateWire {
    return {
      values: cp?.values ?? thread?.values ?? EMPTY_STATE,
      next: cp?.next ?? [],
      checkpoint: {
        thread_id: threadId,
        checkpoint_ns: '',
        checkpoint_id: cp?.checkpoint_id ?? null,
        checkpoint_map: null,
      },
      metadata: cp?.metadata ?? {},
      created_at: cp?.created_at ?? null,
      parent_checkpoint: cp?.parent_checkpoint_id
        ? { thread_id: threadId, checkpoint_ns: '', checkpoint_id: cp.parent_checkpoint_id, checkpoint_map: null }
        : null,
      tasks: cp?.tasks ?? [],
    };
  }

  async create(
    orgId: string,
    body: {
      thread_id?: string | null | undefined;
      metadata?: Record<string, unknown> | null | undefined;
      if_exists?: string | null | undefined;
    },
  ): Promise<ThreadWire> {
    const id = body.thread_id ? checkId(body.thread_id, 'thread_id') : randomUUID();
    const existing = await this.store.get(orgId, 'thread', id);
    if (existing) {
      if (body.if_exists === 'do_nothing') return existing.body as unknown as ThreadWire;
      throw new BadRequestError(`Thread '${id}' already exists.`, null, 'thread_id');
    }
    const at = now().toISOString();
    const thread: ThreadWire = {
      thread_id: id,
      created_at: at,
      updated_at: at,
      metadata: body.metadata ?? {},
      status: 'idle',
      values: EMPTY_STATE,
      interrupts: {},
      head: null,
    };
    return this.save(orgId, thread);
  }

  async patch(orgId: string, threadId: string, metadata: Record<string, unknown>): Promise<ThreadWire> {
    const thread = await this.get(orgId, threadId);
    thread.metadata = { ...thread.metadata, ...metadata };
    return this.save(orgId, thread);
  }

  async remove(orgId: string, threadId: string): Promise<void> {
    await this.get(orgId, threadId);
    await this.store.deleteChildren(orgId, 'checkpoint', threadId);
    await this.store.deleteChildren(orgId, 'run', threadId);
    await this.store.delete(orgId, 'thread', threadId);
  }

  async search(
    orgId: string,
    q: {
      metadata?: Record<string, unknown> | null | undefined;
      status?: string | null | undefined;
      ids?: string[] | null | undefined;
    },
    page: { limit: number; offset: number },
  ): Promise<ThreadWire[]> {
    const all = (await this.store.list(orgId, 'thread', {}, now())).map((d) => d.body as unknown as ThreadWire);
    return all
      .filter((t) => !q.status || t.status === q.status)
      .filter((t) => !q.ids || q.ids.includes(t.thread_id))
      .filter((t) => matches(t.metadata, q.metadata))
      .reverse()
      .slice(page.offset, page.offset + page.limit);
  }

  /** A new thread with the same metadata, values and checkpoints (same checkpoint ids). */
  async copy(orgId: string, threadId: string): Promise<ThreadWire> {
    const source = await this.get(orgId, threadId);
    const at = now().toISOString();
    const copy: ThreadWire = { ...source, thread_id: randomUUID(), created_at: at, updated_at: at, status: 'idle' };
    for (const cp of await this.checkpoints(orgId, threadId)) {
      await this.store.put({
        orgId,
        kind: 'checkpoint',
        id: `${copy.thread_id}/${cp.checkpoint_id}`,
        parent: copy.thread_id,
        body: cp as unknown as Record<string, unknown>,
        vector: null,
        createdAt: new Date(cp.created_at),
        updatedAt: new Date(cp.created_at),
        expiresAt: null,
      });
    }
    return this.save(orgId, copy);
  }

  async state(orgId: string, threadId: string, checkpointId?: string): Promise<ThreadStateWire> {
    const thread = await this.get(orgId, threadId);
    const id = checkpointId ?? thread.head;
    return this.stateOf(threadId, id ? await this.checkpoint(orgId, threadId, id) : null, thread);
  }

  /** Newest first, from `before` (exclusive), metadata-filtered. */
  async history(
    orgId: string,
    threadId: string,
    q: { limit: number; before?: string | null | undefined; metadata?: Record<string, unknown> | null | undefined },
  ): Promise<ThreadStateWire[]> {
    await this.get(orgId, threadId);
    let list = (await this.checkpoints(orgId, threadId)).reverse();
    if (q.before) list = list.filter((cp) => cp.checkpoint_id < q.before!);
    return list
      .filter((cp) => matches(cp.metadata, q.metadata))
      .slice(0, q.limit)
      .map((cp) => this.stateOf(threadId, cp));
  }

  /** `update_state`: the values applied as a node's write, from the head or from `checkpoint_id` (a fork). */
  async update(
    orgId: string,
    threadId: string,
    body: { values?: unknown; checkpoint_id?: string | null | undefined; as_node?: string | null | undefined },
  ): Promise<{ checkpoint: ThreadStateWire['checkpoint'] }> {
    const thread = await this.get(orgId, threadId);
    const base = body.checkpoint_id ? await this.checkpoint(orgId, threadId, body.checkpoint_id) : null;
    const from = base?.values ?? thread.values;
    const values: unknown = Array.isArray(body.values) ? (body.values[0] as unknown) : body.values;
    const next = applyInput(from, (values ?? null) as Record<string, unknown> | null);
    const cp = await this.commit(
      orgId,
      thread,
      next,
      { source: 'update', writes: { [body.as_node ?? 'agent']: values ?? null } },
      base?.checkpoint_id ?? thread.head,
    );
    return { checkpoint: this.stateOf(threadId, cp).checkpoint };
  }
}

/** Every key of `filter` equals the value in `metadata` (JSON equality), LangGraph's metadata match. */
export function matches(metadata: Record<string, unknown>, filter?: Record<string, unknown> | null): boolean {
  if (!filter) return true;
  return Object.entries(filter).every(([k, v]) => JSON.stringify(metadata[k]) === JSON.stringify(v));
}

export type Threads = LangGraphThreads;
