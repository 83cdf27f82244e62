/**
 * LangGraph crons on Prism (docs/langgraph.md): a stored schedule that starts a run, on its thread or on a new
 * thread each time, as the organisation's user who created it (so the run is an execution billed to that owner,
 * like any other). Every replica polls for due crons; a firing is claimed by a conditional UPDATE on the shared
 * database (the store's claimCron), so on several replicas each firing starts exactly one run. The next firing is
 * computed from the schedule at each claim and stored, so a restart loses nothing but the firings it slept through
 * (a cron that missed several firings fires once, then keeps to its schedule). The clock is injected: tests step it.
 */
import { randomUUID } from 'node:crypto';
import { orgWorkPrincipal, type OrgPrincipal, type Principal } from '../../domain/account';
import { BadRequestError, NotFoundError } from '../../domain/errors';
import type { Logger } from '../../lib/logger';
import type { LangGraphCronRecord, LangGraphStore } from '../../stores/types';
import type { Assistants } from './assistants';
import { checkTimeZone, nextFiring, parseCronSchedule } from './cron-schedule';
import type { MultitaskStrategy, RunRequest, Runs } from './runs';
import { matches, type Threads } from './threads';

export interface CronWire {
  cron_id: string;
  assistant_id: string;
  thread_id: string | null;
  on_run_completed: 'delete' | 'keep' | null;
  end_time: string | null;
  schedule: string;
  timezone: string | null;
  created_at: string;
  updated_at: string;
  payload: Record<string, unknown>;
  user_id: string | null;
  next_run_date: string | null;
  metadata: Record<string, unknown>;
  enabled: boolean;
}

/** What a cron's runs are started with (the run request's fields, stored as the cron's `payload`). */
export interface CronRequest {
  assistant_id?: string | undefined;
  schedule?: string | undefined;
  timezone?: string | null | undefined;
  end_time?: string | null | undefined;
  enabled?: boolean | null | undefined;
  on_run_completed?: 'delete' | 'keep' | null | undefined;
  metadata?: Record<string, unknown> | null | undefined;
  input?: Record<string, unknown> | null | undefined;
  config?: RunRequest['config'];
  interrupt_before?: RunRequest['interrupt_before'];
  interrupt_after?: RunRequest['interrupt_after'];
  webhook?: string | null | undefined;
  multitask_strategy?: MultitaskStrategy | null | undefined;
}

/** The stored body: the wire fields and the owner whose principal the runs start as (not shown). */
type CronBody = Omit<CronWire, 'next_run_date'> & { owner: OrgPrincipal };

export interface Firing {
  cron_id: string;
  due: string;
}

const MAX_DUE_PER_TICK = 100;

type SortKey = 'cron_id' | 'assistant_id' | 'thread_id' | 'created_at' | 'updated_at' | 'next_run_date';

/** What the crons are built on. */
export interface CronsDeps {
  store: LangGraphStore;
  threads: Threads;
  runs: Runs;
  assistants: Assistants;
  orgIdFor(principal: Principal): Promise<string>;
  clock: () => Date;
  logger: Logger | null;
}

export function createCrons(deps: CronsDeps): LangGraphCrons {
  return new LangGraphCrons(deps);
}

/**
 * The crons of the LangGraph API: schedules stored in the LangGraph store, fired by whichever replica claims each
 * due firing. The replica's own state is its poll timer, the tick in progress and the runs it fired.
 */
export class LangGraphCrons {
  /** Fired runs of this replica still starting or running. */
  private readonly firing = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<Firing[]> | null = null;

  constructor(private readonly deps: CronsDeps) {}

  private get store(): LangGraphStore {
    return this.deps.store;
  }

  private clock(): Date {
    return this.deps.clock();
  }

  private toWire(record: LangGraphCronRecord): CronWire {
    const { owner: _owner, ...wire } = record.body as unknown as CronBody;
    return { ...wire, next_run_date: record.nextRunAt?.toISOString() ?? null };
  }

  /** The next this.firing after `after`, or null when disabled, never matching, or past the end time. */
  private nextOf(body: CronBody, after: Date): Date | null {
    if (!body.enabled) return null;
    const next = nextFiring(parseCronSchedule(body.schedule), after, body.timezone);
    if (!next || (body.end_time && next.getTime() > Date.parse(body.end_time))) return null;
    return next;
  }

  private async get(orgId: string, cronId: string): Promise<LangGraphCronRecord> {
    const found = await this.store.getCron(orgId, cronId);
    if (!found) throw new NotFoundError('cron', cronId);
    return found;
  }

  private payloadOf(req: CronRequest, base: Record<string, unknown> = {}): Record<string, unknown> {
    const payload: Record<string, unknown> = { ...base };
    for (const key of [
      'input',
      'config',
      'metadata',
      'interrupt_before',
      'interrupt_after',
      'webhook',
      'multitask_strategy',
    ] as const) {
      if (req[key] !== undefined) payload[key] = req[key];
    }
    return payload;
  }

  private checkEnd(end: string | null | undefined): string | null {
    if (!end) return null;
    const at = Date.parse(end);
    if (Number.isNaN(at)) throw new BadRequestError('end_time must be an ISO 8601 time.', null, 'end_time');
    return new Date(at).toISOString();
  }

  private async ownerOf(principal: Principal): Promise<OrgPrincipal> {
    if (principal.kind === 'user') return { ...principal, isSuperuser: false };
    return orgWorkPrincipal(await this.deps.orgIdFor(principal), 'langgraph-cron');
  }

  /** Starts one firing's run; a new thread for a stateless cron (deleted after the run unless `keep`). */
  private async fire(record: LangGraphCronRecord, due: Date): Promise<void> {
    const body = record.body as unknown as CronBody;
    const payload = body.payload as Omit<RunRequest, 'assistant_id'>;
    const meta = { ...(payload.metadata ?? {}), cron_id: record.cronId, cron_due: due.toISOString() };
    const threadId =
      record.threadId ??
      (await this.deps.threads.create(record.orgId, { metadata: { cron_id: record.cronId, stateless: true } }))
        .thread_id;
    const started = await this.deps.runs.start(body.owner, threadId, {
      ...payload,
      assistant_id: body.assistant_id,
      metadata: meta,
    });
    await started.done;
    if (record.threadId === null && (body.on_run_completed ?? 'delete') === 'delete') {
      await this.deps.threads.remove(record.orgId, threadId).catch(() => undefined);
    }
  }

  /** Claims the crons due now (a conditional claim: one replica fires each) and starts their runs. */
  private async claimDue(): Promise<Firing[]> {
    const now = this.clock();
    const fired: Firing[] = [];
    for (const record of await this.store.dueCrons(now, MAX_DUE_PER_TICK)) {
      const due = record.nextRunAt!;
      let next: Date | null;
      try {
        next = this.nextOf(record.body as unknown as CronBody, now);
      } catch {
        next = null; // a schedule stored by an older parser that this one refuses: stop rather than spin
      }
      if (!(await this.store.claimCron(record.cronId, due, next, now))) continue; // another replica has it
      fired.push({ cron_id: record.cronId, due: due.toISOString() });
      const job = this.fire(record, due)
        .catch((error: unknown) =>
          this.deps.logger?.warn('a cron this.firing could not start its run', {
            cronId: record.cronId,
            error: String(error),
          }),
        )
        .finally(() => this.firing.delete(job));
      this.firing.add(job);
    }
    return fired;
  }

  async create(principal: Principal, threadId: string | null, req: CronRequest): Promise<CronWire> {
    const orgId = await this.deps.orgIdFor(principal);
    if (threadId !== null) await this.deps.threads.get(orgId, threadId);
    await this.deps.assistants.resolve(principal, req.assistant_id ?? '');
    parseCronSchedule(req.schedule ?? '');
    if (req.webhook) await this.deps.runs.checkWebhook(req.webhook);
    const owner = await this.ownerOf(principal);
    const now = this.clock();
    const body: CronBody = {
      cron_id: randomUUID(),
      assistant_id: req.assistant_id ?? '',
      thread_id: threadId,
      on_run_completed: threadId === null ? (req.on_run_completed ?? 'delete') : null,
      end_time: this.checkEnd(req.end_time),
      schedule: req.schedule ?? '',
      timezone: req.timezone ? checkTimeZone(req.timezone) : null,
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
      payload: this.payloadOf(req),
      user_id: owner.userId,
      metadata: req.metadata ?? {},
      enabled: req.enabled ?? true,
      owner,
    };
    const record: LangGraphCronRecord = {
      cronId: body.cron_id,
      orgId,
      threadId,
      body,
      nextRunAt: this.nextOf(body, now),
      createdAt: now,
      updatedAt: now,
    };
    await this.store.putCron(record);
    return this.toWire(record);
  }

  async update(principal: Principal, cronId: string, req: CronRequest): Promise<CronWire> {
    const orgId = await this.deps.orgIdFor(principal);
    const record = await this.get(orgId, cronId);
    const old = record.body as unknown as CronBody;
    if (req.schedule !== undefined) parseCronSchedule(req.schedule);
    if (req.webhook) await this.deps.runs.checkWebhook(req.webhook);
    const now = this.clock();
    const body: CronBody = {
      ...old,
      schedule: req.schedule ?? old.schedule,
      timezone: req.timezone === undefined ? old.timezone : req.timezone ? checkTimeZone(req.timezone) : null,
      end_time: req.end_time === undefined ? old.end_time : this.checkEnd(req.end_time),
      enabled: req.enabled ?? old.enabled,
      on_run_completed: old.thread_id === null ? (req.on_run_completed ?? old.on_run_completed) : null,
      payload: this.payloadOf(req, old.payload),
      metadata: req.metadata ?? old.metadata,
      updated_at: now.toISOString(),
    };
    const updated: LangGraphCronRecord = {
      ...record,
      body,
      nextRunAt: this.nextOf(body, now),
      updatedAt: now,
    };
    await this.store.putCron(updated);
    return this.toWire(updated);
  }

  async remove(principal: Principal, cronId: string): Promise<void> {
    const orgId = await this.deps.orgIdFor(principal);
    if (!(await this.store.deleteCron(orgId, cronId))) throw new NotFoundError('cron', cronId);
  }

  async search(
    principal: Principal,
    q: {
      assistant_id?: string | null | undefined;
      thread_id?: string | null | undefined;
      enabled?: boolean | null | undefined;
      metadata?: Record<string, unknown> | null | undefined;
      sort_by?: string | null | undefined;
      sort_order?: 'asc' | 'desc' | null | undefined;
    },
    page: { limit: number; offset: number },
  ): Promise<CronWire[]> {
    const orgId = await this.deps.orgIdFor(principal);
    const list = (await this.store.listCrons(orgId))
      .map((record) => this.toWire(record))
      .filter((c) => !q.assistant_id || c.assistant_id === q.assistant_id)
      .filter((c) => !q.thread_id || c.thread_id === q.thread_id)
      .filter((c) => q.enabled === null || q.enabled === undefined || c.enabled === q.enabled)
      .filter((c) => matches(c.metadata, q.metadata));
    const by = (q.sort_by ?? 'created_at') as SortKey;
    const sign = q.sort_order === 'asc' ? 1 : -1;
    list.sort((a, b) => sign * (a[by] ?? '').localeCompare(b[by] ?? ''));
    return list.slice(page.offset, page.offset + page.limit);
  }

  /**
   * Claims and starts the crons due at the clock's now (after any tick in progress, which read an earlier now);
   * returns the firings this replica claimed.
   */
  async tick(): Promise<Firing[]> {
    while (this.ticking) await this.ticking.catch(() => undefined);
    const current = this.claimDue().finally(() => (this.ticking = null));
    this.ticking = current;
    return current;
  }

  /** Polls for due crons every `pollMs` (a cron fires at most that late). */
  startScheduler(pollMs: number): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.ticking) return;
      this.tick().catch((error: unknown) => this.deps.logger?.warn('cron poll failed', { error: String(error) }));
    }, pollMs);
    this.timer.unref();
  }

  /** Stops polling (the runs already fired go on as any run does until the executions are stopped). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ticking?.catch(() => undefined);
  }

  /** Resolves when this replica's fired runs have settled (tests). */
  async idle(): Promise<void> {
    await this.ticking?.catch(() => undefined);
    while (this.firing.size > 0) await Promise.allSettled([...this.firing]);
  }
}

export type Crons = LangGraphCrons;
