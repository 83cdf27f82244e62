/**
 * LangGraph runs on Prism: every run is a Prism execution (wallet holds, tiers, limits, usage, pauses and webhooks
 * exactly as /v1/agent/execute), started from the thread's state at its head or at an earlier checkpoint (a fork);
 * when the execution ends (or pauses) its answer becomes the thread's next checkpoint. A busy thread follows the
 * run's multitask strategy: reject (409 thread_busy), interrupt or rollback (cancel the running run; rollback also
 * forgets it) or enqueue (start after it). A run's `webhook` receives the LangGraph run (its shape, status and the
 * thread's values) when it ends, through Prism's signed, SSRF-checked webhook sender.
 */
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../domain/account';
import { BadRequestError, ConflictError, NotFoundError } from '../../domain/errors';
import type { Execution } from '../../domain/execution';
import { checkPublicUrl, SafeFetchError } from '../../lib/safe-fetch';
import type { LangGraphStore } from '../../stores/types';
import type { ExecutionsService, ResumeDecision } from '../executions/executions.types';
import type { Assistants } from './assistants';
import { applyInput, executionInputsOf, replyOf, type LgState } from './langgraph-state';
import type { ThreadWire, Threads } from './threads';

export type RunStatus = 'pending' | 'running' | 'error' | 'success' | 'timeout' | 'interrupted';
export type MultitaskStrategy = 'reject' | 'interrupt' | 'rollback' | 'enqueue';

export interface RunWire {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  created_at: string;
  updated_at: string;
  status: RunStatus;
  metadata: Record<string, unknown>;
  multitask_strategy: MultitaskStrategy;
  kwargs: Record<string, unknown>;
  /** Prism extension: the execution that did the work (GET /v1/agent/executions/{id}). */
  execution_id: string | null;
  /** The thread's head when the run started (a rollback returns the thread to it). */
  checkpoint_before: string | null;
}

export interface RunRequest {
  assistant_id: string;
  input?: Record<string, unknown> | null | undefined;
  command?: { resume?: unknown } | null | undefined;
  metadata?: Record<string, unknown> | null | undefined;
  config?: { configurable?: Record<string, unknown> | undefined } | null | undefined;
  checkpoint_id?: string | null | undefined;
  interrupt_before?: string[] | '*' | null | undefined;
  interrupt_after?: string[] | '*' | null | undefined;
  webhook?: string | null | undefined;
  multitask_strategy?: MultitaskStrategy | null | undefined;
  if_not_exists?: 'create' | 'reject' | null | undefined;
}

/** What a stream is told while a run goes on. */
export interface RunObserver {
  onValues?(values: LgState): void;
  onText?(delta: string): void;
  onStep?(execution: Execution): void;
}

export interface StartedRun {
  run: RunWire;
  /** Settles once the thread holds the run's outcome. */
  done: Promise<RunWire>;
}

const BUSY: RunStatus[] = ['pending', 'running'];

/** What a run's webhook is sent: LangGraph's run webhook body, keyed for delivery by the run's execution. */
export interface RunWebhook {
  /** The execution's id: deliveries are recorded with it. */
  id: string;
  status: string;
  callbackUrl: string;
  payload: Record<string, unknown>;
}

/** What the runs are built on. */
export interface RunsDeps {
  store: LangGraphStore;
  threads: Threads;
  assistants: Assistants;
  executions: ExecutionsService;
  toolNames(): string[];
  orgIdFor(principal: Principal): Promise<string>;
  /** Delivers a run's webhook (signed, SSRF-checked, retried); null: webhooks are refused. */
  deliverWebhook: ((hook: RunWebhook) => void) | null;
  /** Private-address webhook URLs are allowed (PRISM_ALLOW_PRIVATE_URLS), as for execution callbacks. */
  allowPrivateWebhooks: boolean;
}

export function createRuns(deps: RunsDeps): LangGraphRuns {
  return new LangGraphRuns(deps);
}

/**
 * The runs of the LangGraph API: each is an agent execution whose outcome is written to its thread. Named methods
 * over two pieces of process state: the runs going on here, and those being stopped.
 */
export class LangGraphRuns {
  /** Runs going on in this process, by run id. */
  readonly inFlight = new Map<string, Promise<RunWire>>();
  /** Runs of this process being stopped by a cancel or a multitask strategy: they end interrupted, not failed. */
  private readonly stopping = new Set<string>();

  constructor(private readonly deps: RunsDeps) {}

  private get store(): LangGraphStore {
    return this.deps.store;
  }

  private get threads(): Threads {
    return this.deps.threads;
  }

  /** Refused at submission what the webhook sender would refuse at delivery, as /v1/agent/execute does. */
  async checkWebhook(url: string): Promise<void> {
    try {
      await checkPublicUrl(url, this.deps.allowPrivateWebhooks);
    } catch (error) {
      const reason = error instanceof SafeFetchError ? error.message : 'invalid URL';
      throw new BadRequestError(`webhook refused: ${reason}.`, 'url_not_allowed', 'webhook');
    }
  }

  /** LangGraph's webhook body: the run, its times, the thread's values and the error when it failed. */
  private async sendWebhook(orgId: string, run: RunWire): Promise<void> {
    const url = run.kwargs.webhook;
    if (typeof url !== 'string' || !this.deps.deliverWebhook || !run.execution_id) return;
    const thread = await this.threads.get(orgId, run.thread_id).catch(() => null);
    const at = new Date().toISOString();
    const { checkpoint_before: _before, ...wire } = run;
    this.deps.deliverWebhook({
      id: run.execution_id,
      status: run.status,
      callbackUrl: url,
      payload: {
        ...wire,
        run_started_at: run.created_at,
        run_ended_at: run.updated_at,
        webhook_sent_at: at,
        values: thread?.values ?? null,
        ...(run.status === 'error' && { error: typeof run.kwargs.error === 'string' ? run.kwargs.error : 'failed' }),
      },
    });
  }

  private async saveRun(orgId: string, run: RunWire): Promise<RunWire> {
    run.updated_at = new Date().toISOString();
    await this.store.put({
      orgId,
      kind: 'run',
      id: run.run_id,
      parent: run.thread_id,
      body: run as unknown as Record<string, unknown>,
      vector: null,
      createdAt: new Date(run.created_at),
      updatedAt: new Date(run.updated_at),
      expiresAt: null,
    });
    return run;
  }

  async getRun(orgId: string, threadId: string, runId: string): Promise<RunWire> {
    const found = await this.store.get(orgId, 'run', runId);
    if (!found || found.parent !== threadId) throw new NotFoundError('run', runId);
    return found.body as unknown as RunWire;
  }

  private async runsOf(orgId: string, threadId: string): Promise<RunWire[]> {
    return (await this.store.list(orgId, 'run', { parent: threadId }, new Date())).map(
      (d) => d.body as unknown as RunWire,
    );
  }

  /** Resolves when the run is no longer busy: in this process by its promise, else by reading it. */
  private async settle(orgId: string, run: RunWire): Promise<RunWire> {
    const local = this.inFlight.get(run.run_id);
    if (local) return local;
    let current = run;
    while (BUSY.includes(current.status)) {
      await new Promise((r) => setTimeout(r, 200));
      current = await this.getRun(orgId, run.thread_id, run.run_id);
    }
    return current;
  }

  private async stopRun(principal: Principal, orgId: string, run: RunWire, status: RunStatus): Promise<void> {
    this.stopping.add(run.run_id);
    try {
      if (run.execution_id) await this.deps.executions.cancel(principal, run.execution_id).catch(() => undefined);
      await this.settle(orgId, run).catch(() => undefined);
    } finally {
      this.stopping.delete(run.run_id);
    }
    const latest = await this.getRun(orgId, run.thread_id, run.run_id).catch(() => run);
    latest.status = status;
    await this.saveRun(orgId, latest);
  }

  /** Waits on or clears the thread's busy runs as `strategy` says. */
  private async makeRoom(
    principal: Principal,
    orgId: string,
    threadId: string,
    strategy: MultitaskStrategy,
  ): Promise<void> {
    const busy = (await this.runsOf(orgId, threadId)).filter((r) => BUSY.includes(r.status));
    if (busy.length === 0) return;
    if (strategy === 'reject') {
      throw new ConflictError(
        `Thread '${threadId}' has a run in progress (multitask_strategy 'reject').`,
        'thread_busy',
      );
    }
    for (const run of busy) {
      if (strategy === 'enqueue') {
        await this.settle(orgId, run);
        continue;
      }
      await this.stopRun(principal, orgId, run, 'interrupted');
      if (strategy === 'rollback') {
        await this.store.delete(orgId, 'run', run.run_id);
        const thread = await this.threads.get(orgId, threadId);
        const before = run.checkpoint_before
          ? await this.threads.checkpoint(orgId, threadId, run.checkpoint_before)
          : null;
        for (const cp of await this.threads.checkpoints(orgId, threadId)) {
          if (cp.metadata.run_id === run.run_id) {
            await this.store.delete(orgId, 'checkpoint', `${threadId}/${cp.checkpoint_id}`);
          }
        }
        thread.head = before?.checkpoint_id ?? null;
        thread.values = before?.values ?? { messages: [] };
        thread.status = 'idle';
        await this.threads.save(orgId, thread);
      }
    }
  }

  private approvalFor(list: string[] | '*' | null | undefined): string[] | null {
    if (!list) return null;
    if (list === '*' || list.includes('*') || list.includes('tools')) return this.deps.toolNames();
    return list;
  }

  /** The thread's outcome once the execution ends or pauses. */
  private async finish(
    principal: Principal,
    orgId: string,
    run: RunWire,
    base: LgState,
    observer: RunObserver | undefined,
  ): Promise<RunWire> {
    const controller = new AbortController();
    let last: Execution | null = null;
    try {
      for await (const record of await this.deps.executions.follow(principal, run.execution_id!, controller.signal)) {
        last = record;
        observer?.onStep?.(record);
        if (record.status === 'paused' || record.status === 'completed' || record.status === 'failed') break;
      }
    } finally {
      controller.abort();
    }
    const latest = await this.getRun(orgId, run.thread_id, run.run_id).catch(() => null);
    if (!latest) return run; // rolled back
    const thread = await this.threads.get(orgId, run.thread_id);
    if (latest.status === 'interrupted' || !last || this.stopping.has(run.run_id)) {
      thread.status = 'idle';
      await this.threads.save(orgId, thread);
      if (this.stopping.has(run.run_id)) latest.status = 'interrupted';
      return latest;
    }
    if (last.status === 'completed') {
      const values = applyInput(base, { messages: [replyOf(last.response, run.run_id)] });
      await this.threads.commit(orgId, thread, values, { source: 'loop', step: last.steps.length, run_id: run.run_id });
      thread.status = 'idle';
      thread.interrupts = {};
      latest.status = 'success';
    } else if (last.status === 'paused' && last.pause) {
      const interrupt = {
        id: last.id,
        value: {
          kind: last.pause.kind,
          tool_call: last.pause.toolCall,
          question: last.pause.question,
          expires_at: last.pause.expiresAt,
          resume: last.pause.kind === 'question' ? ['answer', 'reject'] : ['approve', 'reject', 'edit'],
        },
      };
      const task = { id: last.id, name: 'tools', error: null, interrupts: [interrupt], checkpoint: null, state: null };
      await this.threads.commit(
        orgId,
        thread,
        base,
        { source: 'loop', step: last.steps.length, run_id: run.run_id },
        thread.head,
        ['tools'],
        [task],
      );
      thread.status = 'interrupted';
      thread.interrupts = { [last.id]: [interrupt] };
      latest.status = 'interrupted';
    } else {
      thread.status = 'error';
      latest.status = 'error';
      latest.kwargs = { ...latest.kwargs, error: last.errorMessage };
    }
    await this.threads.save(orgId, thread);
    observer?.onValues?.(thread.values);
    return this.saveRun(orgId, latest);
  }

  private decisionOf(resume: unknown): ResumeDecision {
    if (resume === true || resume === 'approve' || resume === null || resume === undefined) {
      return { action: 'approve' };
    }
    if (typeof resume === 'string') return { action: 'answer', text: resume };
    const r = resume as Record<string, unknown>;
    const action = r.action ?? r.type;
    if (action === 'reject') return { action: 'reject', reason: typeof r.reason === 'string' ? r.reason : '' };
    if (action === 'edit' && r.arguments && typeof r.arguments === 'object') {
      return { action: 'edit', arguments: r.arguments as Record<string, unknown> };
    }
    if (action === 'answer' && typeof r.text === 'string') return { action: 'answer', text: r.text };
    if (action === 'approve' || action === 'accept') return { action: 'approve' };
    throw new BadRequestError(
      "command.resume must be true, a string answer, or {action: 'approve'|'reject'|'edit'|'answer'}.",
      'invalid_decision',
      'command.resume',
    );
  }

  async start(
    principal: Principal,
    threadId: string | null,
    body: RunRequest,
    observer?: RunObserver,
  ): Promise<StartedRun> {
    const orgId = await this.deps.orgIdFor(principal);
    let thread: ThreadWire;
    if (threadId === null) thread = await this.threads.create(orgId, { metadata: { stateless: true } });
    else {
      thread = await this.threads.get(orgId, threadId).catch(async (error: unknown) => {
        if (body.if_not_exists === 'create') return this.threads.create(orgId, { thread_id: threadId });
        throw error;
      });
    }
    const agent = await this.deps.assistants.resolve(principal, body.assistant_id);
    if (body.webhook) await this.checkWebhook(body.webhook);
    const strategy = body.multitask_strategy ?? 'enqueue';
    await this.makeRoom(principal, orgId, thread.thread_id, strategy);
    thread = await this.threads.get(orgId, thread.thread_id);
    const at = new Date().toISOString();
    const run: RunWire = {
      run_id: randomUUID(),
      thread_id: thread.thread_id,
      assistant_id: body.assistant_id,
      created_at: at,
      updated_at: at,
      status: 'pending',
      metadata: body.metadata ?? {},
      multitask_strategy: strategy,
      kwargs: body.webhook ? { webhook: body.webhook } : {},
      execution_id: null,
      checkpoint_before: thread.head,
    };
    let execution: Execution;
    let base: LgState;
    if (body.command?.resume !== undefined) {
      const paused = (await this.runsOf(orgId, thread.thread_id)).reverse().find((r) => r.status === 'interrupted');
      if (thread.status !== 'interrupted' || !paused?.execution_id) {
        throw new ConflictError(`Thread '${thread.thread_id}' is not waiting for a resume.`, 'execution_not_paused');
      }
      base = thread.values;
      execution = await this.deps.executions.resume(
        principal,
        paused.execution_id,
        this.decisionOf(body.command.resume),
        {
          detach: true,
          ...(observer?.onText && { onText: (delta: string) => observer.onText?.(delta) }),
        },
      );
    } else {
      const from = body.checkpoint_id
        ? await this.threads.checkpoint(orgId, thread.thread_id, body.checkpoint_id)
        : null;
      base = applyInput(from?.values ?? thread.values, body.input ?? null);
      const { prompt, inputs } = executionInputsOf(agent?.config.prompt ?? null, base.messages);
      const configurable = body.config?.configurable ?? {};
      execution = await this.deps.executions.execute(
        principal,
        {
          name: agent ? `${agent.name}:${agent.version}` : null,
          model: typeof configurable.model === 'string' ? configurable.model : null,
          inputs: Object.keys(inputs).length > 0 ? inputs : null,
          batch: false,
          callbackUrl: null,
          prompt,
          jsonSchema: null,
          skills: [],
          tools: null,
          toolsets: null,
          mcpServers: null,
          requireApproval: this.approvalFor(body.interrupt_before) ?? this.approvalFor(body.interrupt_after),
          serviceTier: 'standard',
          mode: null,
          metadata: { langgraph_thread_id: thread.thread_id, langgraph_run_id: run.run_id },
          clientId: null,
          clientCreatedAt: null,
        },
        { detach: true, ...(observer?.onText && { onText: (delta: string) => observer.onText?.(delta) }) },
      );
      await this.threads.commit(
        orgId,
        thread,
        base,
        { source: 'input', step: -1, run_id: run.run_id, writes: { __start__: body.input ?? null } },
        from?.checkpoint_id ?? thread.head,
      );
    }
    observer?.onValues?.(base);
    run.execution_id = execution.id;
    run.status = 'running';
    thread.status = 'busy';
    await this.threads.save(orgId, thread);
    await this.saveRun(orgId, run);
    const done = this.finish(principal, orgId, run, base, observer)
      .then(async (ended) => {
        if (!BUSY.includes(ended.status)) await this.sendWebhook(orgId, ended).catch(() => undefined);
        return ended;
      })
      .finally(() => this.inFlight.delete(run.run_id));
    this.inFlight.set(run.run_id, done);
    done.catch(() => undefined);
    return { run, done };
  }

  async join(principal: Principal, threadId: string, runId: string): Promise<RunWire> {
    const orgId = await this.deps.orgIdFor(principal);
    return this.settle(orgId, await this.getRun(orgId, threadId, runId));
  }

  async get(principal: Principal, threadId: string, runId: string): Promise<RunWire> {
    return this.getRun(await this.deps.orgIdFor(principal), threadId, runId);
  }

  async list(
    principal: Principal,
    threadId: string,
    q: { limit: number; offset: number; status?: string | null | undefined },
  ): Promise<RunWire[]> {
    const orgId = await this.deps.orgIdFor(principal);
    await this.threads.get(orgId, threadId);
    return (await this.runsOf(orgId, threadId))
      .filter((r) => !q.status || r.status === q.status)
      .reverse()
      .slice(q.offset, q.offset + q.limit);
  }

  async cancel(principal: Principal, threadId: string, runId: string, action: 'interrupt' | 'rollback') {
    const orgId = await this.deps.orgIdFor(principal);
    const run = await this.getRun(orgId, threadId, runId);
    if (!BUSY.includes(run.status) && run.status !== 'interrupted') return;
    await this.stopRun(principal, orgId, run, 'interrupted');
    if (action === 'rollback') await this.store.delete(orgId, 'run', runId);
  }

  async remove(principal: Principal, threadId: string, runId: string): Promise<void> {
    const orgId = await this.deps.orgIdFor(principal);
    const run = await this.getRun(orgId, threadId, runId);
    if (BUSY.includes(run.status)) {
      throw new ConflictError(`Run '${runId}' is still running; cancel it first.`, 'thread_busy');
    }
    await this.store.delete(orgId, 'run', runId);
  }
}

export type Runs = LangGraphRuns;
