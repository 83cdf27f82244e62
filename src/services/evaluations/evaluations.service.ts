/**
 * Evaluations: runs that score a source's stored responses against feedback, their reads, `optimize` (feedback →
 * a new version of a skill) and `rerun` (the same items re-processed with another skill, scored again, before and
 * after side by side).
 *
 * This is the facade: the reads, the job dispatch and the failure record live here; the work of each kind is in
 * evaluation-run.ts, evaluation-optimise.ts and evaluation-rerun.ts (what they share, in evaluation-context.ts).
 *
 * `run` and `rerun` store a record in `running` and return it at once; the job queue finishes it (`runJob`), and a
 * restart re-enqueues what was unfinished. Every read is scoped to the caller's organisation; another
 * organisation's run is "not found".
 */
import type { Principal } from '../../domain/account';
import { AppError, NotFoundError } from '../../domain/errors';
import type { EvaluationItem, EvaluationRun, EvaluationSourceType } from '../../domain/evaluation';
import { givenUpMessage, startsUsedUp } from '../../domain/restart-policy';
import type { EvaluationListQuery } from '../../stores/types/evaluation';
import { checkSource, type EvaluationContext, type EvaluationsServiceDeps } from './evaluation-context';
import { createOptimize } from './evaluation-optimise';
import { startRerun, rescore, type RerunInput, type RerunStarted } from './evaluation-rerun';
import { evaluate, startRun, type RunInput } from './evaluation-run';
import type { OptimiseRequest, OptimiseResult } from './skill-optimiser';

export type { EvaluationsServiceDeps } from './evaluation-context';
export type { RerunInput, RerunStarted } from './evaluation-rerun';
export type { RunInput } from './evaluation-run';

export interface PreviewInput {
  sourceType: EvaluationSourceType;
  sourceId: string;
  dataFrom: Date | null;
  dataTo: Date | null;
}

export interface Preview {
  totalItems: number;
  totalWithFeedback: number;
  feedbackWithCorrections: number;
  latestItemAt: Date | null;
}

export interface EvaluationsService {
  run(principal: Principal, input: RunInput): Promise<EvaluationRun>;
  get(principal: Principal, id: string): Promise<EvaluationRun>;
  list(principal: Principal, query: EvaluationListQuery): Promise<{ data: EvaluationRun[]; count: number }>;
  items(principal: Principal, id: string, page: { offset: number; limit: number }): Promise<EvaluationItem[]>;
  delete(principal: Principal, id: string): Promise<EvaluationRun>;
  preview(principal: Principal, input: PreviewInput): Promise<Preview>;
  metrics(
    principal: Principal,
    query: { limit: number; sourceType: EvaluationSourceType | null; sourceLabel: string | null },
  ): Promise<EvaluationRun[]>;
  sourceCounts(principal: Principal): Promise<Array<{ type: EvaluationSourceType; label: string; count: number }>>;
  optimize(principal: Principal, request: OptimiseRequest): Promise<OptimiseResult>;
  rerun(principal: Principal, input: RerunInput): Promise<RerunStarted>;
  runJob(id: string): Promise<void>;
  resumeUnfinished(): Promise<{ resumed: number }>;
}

export function createEvaluationsService(deps: EvaluationsServiceDeps): EvaluationsService {
  const ctx: EvaluationContext = { ...deps, now: deps.now ?? (() => new Date()) };
  const { store, logger } = ctx;
  const optimize = createOptimize(ctx);

  async function owned(principal: Principal, id: string): Promise<EvaluationRun> {
    const run = await store.get(await deps.orgIdFor(principal), id);
    if (!run) throw new NotFoundError('evaluation', id);
    return run;
  }

  async function fail(id: string, error: unknown): Promise<void> {
    const message = error instanceof AppError ? error.message : 'Internal error while running the evaluation.';
    if (!(error instanceof AppError)) logger.error('evaluation failed', { evaluation: id, error: String(error) });
    await store.finish(
      id,
      {
        status: 'failed',
        accuracy: null,
        apiCompletionRate: null,
        totalItems: 0,
        totalWithFeedback: 0,
        dataFrom: null,
        dataTo: null,
        results: {},
        errorMessage: message,
        completedAt: ctx.now(),
      },
      [],
    );
  }

  return {
    run: (principal, input) => startRun(ctx, principal, input),

    get: owned,

    async list(principal, query) {
      return store.list(await deps.orgIdFor(principal), query);
    },

    async items(principal, id, page) {
      const run = await owned(principal, id);
      return store.items(run.orgId, run.id, page);
    },

    async delete(principal, id) {
      const run = await owned(principal, id);
      await store.delete(run.orgId, run.id);
      return run;
    },

    async preview(principal, input) {
      const orgId = await deps.orgIdFor(principal);
      const source = await checkSource(ctx, principal, orgId, input.sourceType, input.sourceId);
      const items = await store.sourceItems(orgId, {
        sourceType: input.sourceType,
        sourceId: source.sourceId,
        sourceVersion: source.version,
        dataFrom: input.dataFrom,
        dataTo: input.dataTo,
        maxItems: deps.maxItems,
      });
      const latest = items.reduce<Date | null>((m, i) => (m === null || i.createdAt > m ? i.createdAt : m), null);
      return {
        totalItems: items.length,
        totalWithFeedback: items.filter((i) => i.feedback !== null).length,
        feedbackWithCorrections: items.filter((i) => i.feedback?.response != null).length,
        latestItemAt: latest,
      };
    },

    async metrics(principal, query) {
      return store.completed(await deps.orgIdFor(principal), query);
    },

    async sourceCounts(principal) {
      return store.sourceCounts(await deps.orgIdFor(principal));
    },

    optimize,

    rerun: (principal, input) => startRerun(ctx, optimize, principal, input),

    async runJob(id) {
      const run = await store.start(id);
      if (!run) return;
      try {
        await (run.kind === 'rerun' ? rescore(ctx, run) : evaluate(ctx, run));
      } catch (error) {
        await fail(id, error);
      }
    },

    async resumeUnfinished() {
      let resumed = 0;
      for (const run of await store.unfinished()) {
        if (startsUsedUp(run.attempts)) {
          // Claimed (so `finish` applies) and failed with the reason, never run.
          await store.start(run.id);
          const message = givenUpMessage('evaluation', run.attempts);
          await fail(run.id, new AppError(500, { message, type: 'internal_server_error' }));
          continue;
        }
        deps.enqueue(run.id);
        resumed += 1;
      }
      return { resumed };
    },
  };
}
