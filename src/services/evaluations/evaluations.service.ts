/**
 * Evaluations: runs that score a source's stored responses against feedback, their reads, `optimize` (feedback →
 * a new version of a skill) and `rerun` (the same items re-processed with another skill, scored again, before and
 * after side by side).
 *
 * `run` and `rerun` store a record in `running` and return it at once; the job queue finishes it (`runJob`), and a
 * restart re-enqueues what was unfinished. Every read is scoped to the caller's organisation; another
 * organisation's run is "not found".
 */
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../domain/account';
import { AppError, BadRequestError, NotFoundError } from '../../domain/errors';
import type {
  EvaluationConfig,
  EvaluationItem,
  EvaluationRun,
  EvaluationSourceType,
  EvaluatorName,
  SourceItem,
} from '../../domain/evaluation';
import type { ParsedSkill, SkillRecord } from '../../domain/skill';
import type { Logger } from '../../lib/logger';
import type { AgentStore } from '../../stores/execution-store';
import type { EvaluationListQuery, EvaluationStore } from '../../stores/evaluation-store';
import type { HubService } from '../hub/hub.service';
import type { SkillsService } from '../skills/skills.service';
import { expectedFor } from './corrections';
import { judgeItem } from './judge';
import type { Correction } from './optimizer';
import { EVALUATION_MODEL_SETTING, type EvaluationModel } from './model';
import { createSkillOptimiser, type OptimiseRequest, type OptimiseResult } from './optimise-skill';
import type { Reprocess } from './reprocess';
import { scoreItem, summarise, type FieldVerdict, type ItemScore, type ScoreOptions } from './scoring';

export interface EvaluationsServiceDeps {
  store: EvaluationStore;
  agents: AgentStore;
  skills: SkillsService;
  hub: HubService;
  /** The upstream chat model for llm_judge, inferring corrections and rewriting instructions; null without one. */
  model: EvaluationModel | null;
  reprocess: Reprocess;
  orgIdFor: (principal: Principal) => Promise<string>;
  enqueue: (id: string) => void;
  /** Most items one run reads (newest first). */
  maxItems: number;
  logger: Logger;
  now?: () => Date;
}

export interface RunInput {
  sourceType: EvaluationSourceType;
  sourceId: string;
  evaluators: EvaluatorName[];
  inferCorrections: boolean;
  skipNullExpected: boolean;
  fuzzyThreshold: number;
  dataFrom: Date | null;
  dataTo: Date | null;
  maxItems: number | null;
}

export interface RerunInput {
  evaluationId: string;
  skillId: string | null;
  skillName: string | null;
  skillVersion: string | null;
}

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

export interface RerunStarted {
  run: EvaluationRun;
  parent: EvaluationRun;
  skill: SkillRecord;
  optimised: OptimiseResult | null;
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

/** The job runner acts for the run's organisation: the skill scope needs nothing else. */
const orgPrincipal = (orgId: string): Principal => ({
  kind: 'user',
  orgId,
  userId: 'evaluations',
  keyId: null,
  tier: 'free',
  isSuperuser: false,
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a run stores per item (and a rerun reads back from its parent). */
interface ItemDetail {
  entity_type: SourceItem['entityType'];
  entity_id: string;
  status: string;
  created_at: string;
  has_feedback: boolean;
  corrections: string | null;
  note: string | null;
  expected: Record<string, unknown> | null;
  predicted: unknown;
  scores: ItemScore['scores'];
  fields: FieldVerdict[];
  judge: ItemScore['judge'];
}

export function createEvaluationsService(deps: EvaluationsServiceDeps): EvaluationsService {
  const { store, model, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const optimiser = createSkillOptimiser({ skills: deps.skills, hub: deps.hub, model, logger });

  function requireModel(evaluators: EvaluatorName[]): void {
    if (evaluators.includes('llm_judge') && !model) {
      throw new BadRequestError(
        `The llm_judge evaluator needs an upstream chat model, and this server has none: set ${EVALUATION_MODEL_SETTING} ` +
          'to a chat model of the models file (PRISM_MODELS_FILE) served by an upstream, or choose field_accuracy, ' +
          'fuzzy_field_match or equals_expected.',
        'evaluation_model_unavailable',
        'evaluators',
      );
    }
  }

  async function owned(principal: Principal, id: string): Promise<EvaluationRun> {
    const run = await store.get(await deps.orgIdFor(principal), id);
    if (!run) throw new NotFoundError('evaluation', id);
    return run;
  }

  /** Checks the source exists for the caller and returns its id, label and version as stored. */
  async function checkSource(
    principal: Principal,
    orgId: string,
    type: EvaluationSourceType,
    sourceId: string,
  ): Promise<{ sourceId: string; label: string; version: string | null }> {
    if (type === 'request_domain') {
      if (!deps.hub.find(sourceId)) throw new NotFoundError('domain', sourceId);
      return { sourceId, label: sourceId, version: null };
    }
    if (type === 'skill') {
      const record = await deps.skills.lookup(principal, UUID.test(sourceId) ? { id: sourceId } : { name: sourceId });
      return { sourceId: record.name, label: record.name, version: null };
    }
    const at = sourceId.lastIndexOf(':');
    const name = at > 0 ? sourceId.slice(0, at) : sourceId;
    const version = at > 0 ? sourceId.slice(at + 1) : null;
    const agent = await deps.agents.findByName(orgId, name, version);
    if (!agent) throw new NotFoundError('agent', sourceId);
    return { sourceId: name, label: version ? `${name}:${version}` : name, version };
  }

  function scoreOptions(config: EvaluationConfig): ScoreOptions {
    return {
      evaluators: config.evaluators,
      skipNullExpected: config.skipNullExpected,
      fuzzyThreshold: config.fuzzyThreshold,
      judge: config.evaluators.includes('llm_judge')
        ? (expected, predicted) => {
            if (!model) throw new Error(`no judge model (${EVALUATION_MODEL_SETTING} is not set)`);
            return judgeItem(model, expected, predicted);
          }
        : null,
    };
  }

  async function evaluate(run: EvaluationRun): Promise<EvaluationRun | null> {
    const items = await store.sourceItems(run.orgId, {
      sourceType: run.sourceType,
      sourceId: run.sourceId,
      sourceVersion: run.sourceVersion,
      dataFrom: run.dataFrom,
      dataTo: run.dataTo,
      maxItems: run.config.maxItems,
    });
    const options = scoreOptions(run.config);
    const details: ItemDetail[] = [];
    const inferred = { response: 0, inferred_model: 0, inferred_rules: 0, not_inferred: 0 };
    for (const item of items) {
      const predicted = item.status === 'completed' ? item.response : null;
      const expected = await expectedFor(item.feedback, predicted, {
        infer: run.config.inferCorrections,
        model,
      });
      if (expected.source) inferred[expected.source] += 1;
      else if (item.feedback) inferred.not_inferred += 1;
      const score = expected.expected ? await scoreItem(expected.expected, predicted, options) : null;
      details.push({
        entity_type: item.entityType,
        entity_id: item.entityId,
        status: item.status,
        created_at: item.createdAt.toISOString(),
        has_feedback: item.feedback !== null,
        corrections: expected.source,
        note: expected.note,
        expected: expected.expected,
        predicted,
        scores: score?.scores ?? {},
        fields: score?.fields ?? [],
        judge: score?.judge ?? null,
      });
    }
    const scored = details.filter((d) => d.expected !== null);
    const summary = summarise(scored, run.config.evaluators, run.config.fuzzyThreshold);
    const primary = run.config.evaluators[0] as EvaluatorName;
    const notes: string[] = [];
    if (run.config.inferCorrections && !model && inferred.inferred_rules + inferred.not_inferred > 0) {
      notes.push(
        `No upstream model (${EVALUATION_MODEL_SETTING}): corrections were inferred from notes by deterministic rules ` +
          'only (explicit "<field> should be <value>" / "<field>: <value>" statements about fields of the response).',
      );
    }
    const completed = items.filter((i) => i.status === 'completed').length;
    const dates = items.map((i) => i.createdAt.getTime());
    return store.finish(
      run.id,
      {
        status: 'completed',
        accuracy: summary[primary]?.accuracy ?? null,
        apiCompletionRate: items.length === 0 ? null : round(completed / items.length),
        totalItems: items.length,
        totalWithFeedback: items.filter((i) => i.feedback !== null).length,
        dataFrom: run.dataFrom ?? (dates.length ? new Date(Math.min(...dates)) : null),
        dataTo: run.dataTo ?? (dates.length ? new Date(Math.max(...dates)) : null),
        results: {
          primary_evaluator: primary,
          evaluators: summary,
          items_scored: scored.length,
          corrections: inferred,
          fuzzy_threshold: run.config.fuzzyThreshold,
          notes,
        },
        errorMessage: null,
        completedAt: now(),
      },
      details.map((detail, position) => ({
        position,
        entityType: detail.entity_type,
        entityId: detail.entity_id,
        detail: detail as unknown as Record<string, unknown>,
      })),
    );
  }

  async function rescore(run: EvaluationRun): Promise<EvaluationRun | null> {
    const parent = run.parentId ? await store.getById(run.parentId) : null;
    if (!parent) {
      throw new AppError(404, {
        message: 'the evaluation this rerun re-processes was deleted',
        type: 'not_found_error',
      });
    }
    const skillRef = run.config.skill;
    if (!skillRef) throw new Error('a rerun without a skill');
    const skill: ParsedSkill = await deps.skills.resolve(orgPrincipal(run.orgId), {
      kind: 'id',
      id: skillRef.id,
      version: 'latest',
    });
    const options = scoreOptions(run.config);
    const parentItems = await store.allItems(parent.id);
    const before: ItemScore[] = [];
    const after: ItemScore[] = [];
    const skipped: Array<{ entity_type: string; entity_id: string; reason: string }> = [];
    const out: EvaluationItem[] = [];
    for (const item of parentItems) {
      const detail = item.detail as unknown as ItemDetail;
      if (!detail.expected) continue;
      if (item.entityType !== 'request') {
        skipped.push({
          entity_type: item.entityType,
          entity_id: item.entityId,
          reason: 'agent executions are not re-processed by rerun (only stored predictions are)',
        });
        continue;
      }
      let predicted: unknown;
      try {
        predicted = await deps.reprocess(run.orgId, item.entityId, skill);
      } catch (error) {
        skipped.push({ entity_type: item.entityType, entity_id: item.entityId, reason: (error as Error).message });
        continue;
      }
      const score = await scoreItem(detail.expected, predicted, options);
      const beforeScore: ItemScore = { scores: detail.scores, fields: detail.fields, judge: detail.judge };
      before.push(beforeScore);
      after.push(score);
      out.push({
        position: out.length,
        entityType: item.entityType,
        entityId: item.entityId,
        detail: {
          entity_type: item.entityType,
          entity_id: item.entityId,
          expected: detail.expected,
          before: { predicted: detail.predicted, scores: detail.scores },
          after: { predicted, scores: score.scores, fields: score.fields, judge: score.judge },
        },
      });
    }
    const evaluators = run.config.evaluators;
    const beforeSummary = summarise(before, evaluators, run.config.fuzzyThreshold);
    const afterSummary = summarise(after, evaluators, run.config.fuzzyThreshold);
    const primary = evaluators[0] as EvaluatorName;
    const comparison = Object.fromEntries(
      evaluators.map((e) => {
        const b = beforeSummary[e]?.accuracy ?? null;
        const a = afterSummary[e]?.accuracy ?? null;
        return [e, { before: b, after: a, delta: a !== null && b !== null ? round(a - b) : null }];
      }),
    );
    const paths = new Set([
      ...Object.keys(beforeSummary[primary]?.fields ?? {}),
      ...Object.keys(afterSummary[primary]?.fields ?? {}),
    ]);
    const fields = [...paths].sort().map((path) => ({
      path,
      before: beforeSummary[primary]?.fields[path]?.accuracy ?? null,
      after: afterSummary[primary]?.fields[path]?.accuracy ?? null,
    }));
    return store.finish(
      run.id,
      {
        status: 'completed',
        accuracy: afterSummary[primary]?.accuracy ?? null,
        apiCompletionRate: parent.apiCompletionRate,
        totalItems: parent.totalItems,
        totalWithFeedback: parent.totalWithFeedback,
        dataFrom: parent.dataFrom,
        dataTo: parent.dataTo,
        results: {
          primary_evaluator: primary,
          skill: { id: skill.record.id, name: skill.record.name, skill_version: skill.record.skillVersion },
          comparison,
          fields,
          before: beforeSummary,
          after: afterSummary,
          evaluators: afterSummary,
          items_reprocessed: out.length,
          skipped,
          notes: ['Re-processed responses are scored only; no prediction is stored or billed.'],
        },
        errorMessage: null,
        completedAt: now(),
      },
      out,
    );
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
        completedAt: now(),
      },
      [],
    );
  }

  async function resolveTarget(principal: Principal, input: RerunInput): Promise<SkillRecord> {
    if (input.skillId) return deps.skills.lookup(principal, { id: input.skillId });
    return deps.skills.lookup(principal, { name: input.skillName, version: input.skillVersion });
  }

  async function optimize(principal: Principal, request: OptimiseRequest): Promise<OptimiseResult> {
    const orgId = await deps.orgIdFor(principal);
    const fromRun = request.evaluationId ? await store.get(orgId, request.evaluationId) : null;
    if (request.evaluationId && !fromRun) throw new NotFoundError('evaluation', request.evaluationId);
    let corrections: Correction[];
    let source: { type: EvaluationSourceType; id: string };
    if (fromRun) {
      if (fromRun.status !== 'completed') {
        throw new BadRequestError(
          `Evaluation '${fromRun.id}' is ${fromRun.status}; optimize reads a completed one.`,
          null,
          'evaluation_id',
        );
      }
      source = { type: fromRun.sourceType, id: fromRun.sourceId };
      corrections = (await store.allItems(fromRun.id)).flatMap((item) => {
        const d = item.detail as { expected?: Record<string, unknown> | null; predicted?: unknown; after?: unknown };
        // A rerun's items keep the re-processed response under `after`.
        const predicted =
          fromRun.kind === 'rerun' ? (d.after as { predicted?: unknown } | undefined)?.predicted : d.predicted;
        return d.expected ? [{ entityId: item.entityId, expected: d.expected, predicted: predicted ?? null }] : [];
      });
    } else {
      if (!request.sourceType || !request.sourceId) {
        throw new BadRequestError('Send `evaluation_id`, or `source_type` and `source_id`.', null, 'evaluation_id');
      }
      const checked = await checkSource(principal, orgId, request.sourceType, request.sourceId);
      source = { type: request.sourceType, id: checked.sourceId };
      const items = await store.sourceItems(orgId, {
        sourceType: request.sourceType,
        sourceId: checked.sourceId,
        sourceVersion: checked.version,
        dataFrom: null,
        dataTo: null,
        maxItems: deps.maxItems,
      });
      corrections = [];
      for (const item of items) {
        const predicted = item.status === 'completed' ? item.response : null;
        const e = await expectedFor(item.feedback, predicted, { infer: request.inferCorrections, model });
        if (e.expected) corrections.push({ entityId: item.entityId, expected: e.expected, predicted });
      }
    }
    return optimiser.optimise(principal, { ...request, source }, corrections);
  }

  return {
    async run(principal, input) {
      requireModel(input.evaluators);
      const orgId = await deps.orgIdFor(principal);
      const source = await checkSource(principal, orgId, input.sourceType, input.sourceId);
      const run: EvaluationRun = {
        id: randomUUID(),
        orgId,
        kind: 'run',
        parentId: null,
        sourceType: input.sourceType,
        sourceId: source.sourceId,
        sourceLabel: source.label,
        sourceVersion: source.version,
        status: 'running',
        config: {
          evaluators: input.evaluators,
          inferCorrections: input.inferCorrections,
          skipNullExpected: input.skipNullExpected,
          fuzzyThreshold: input.fuzzyThreshold,
          maxItems: Math.min(input.maxItems ?? deps.maxItems, deps.maxItems),
          skill: null,
        },
        accuracy: null,
        apiCompletionRate: null,
        totalItems: 0,
        totalWithFeedback: 0,
        dataFrom: input.dataFrom,
        dataTo: input.dataTo,
        results: {},
        errorMessage: null,
        createdAt: now(),
        completedAt: null,
      };
      await store.insert(run);
      deps.enqueue(run.id);
      return run;
    },

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
      const source = await checkSource(principal, orgId, input.sourceType, input.sourceId);
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

    async rerun(principal, input) {
      const orgId = await deps.orgIdFor(principal);
      const parent = await store.get(orgId, input.evaluationId);
      if (!parent) throw new NotFoundError('evaluation', input.evaluationId);
      if (parent.kind !== 'run' || parent.status !== 'completed') {
        throw new BadRequestError(
          `Evaluation '${parent.id}' is ${parent.kind === 'run' ? parent.status : 'a rerun'}; rerun re-processes a completed run.`,
          null,
          'evaluation_id',
        );
      }
      requireModel(parent.config.evaluators);
      let optimised: OptimiseResult | null = null;
      let skill: SkillRecord;
      if (input.skillId || input.skillName) {
        skill = await resolveTarget(principal, input);
      } else {
        if (parent.sourceType !== 'skill') {
          throw new BadRequestError(
            'Name the skill to re-process with (`skill_id` or `skill_name`): only a skill source is optimized automatically.',
            null,
            'skill_id',
          );
        }
        optimised = await optimize(principal, {
          evaluationId: parent.id,
          sourceType: null,
          sourceId: null,
          skillId: null,
          skillName: parent.sourceId,
          inferCorrections: parent.config.inferCorrections,
          useModel: true,
        });
        skill = await deps.skills.get(principal, optimised.skill.id);
      }
      const run: EvaluationRun = {
        ...parent,
        id: randomUUID(),
        kind: 'rerun',
        parentId: parent.id,
        status: 'running',
        config: { ...parent.config, skill: { id: skill.id, name: skill.name, skillVersion: skill.skillVersion } },
        accuracy: null,
        results: {},
        errorMessage: null,
        createdAt: now(),
        completedAt: null,
      };
      await store.insert(run);
      deps.enqueue(run.id);
      return { run, parent, skill, optimised };
    },

    async runJob(id) {
      const run = await store.start(id);
      if (!run) return;
      try {
        await (run.kind === 'rerun' ? rescore(run) : evaluate(run));
      } catch (error) {
        await fail(id, error);
      }
    },

    async resumeUnfinished() {
      const runs = await store.unfinished();
      for (const run of runs) deps.enqueue(run.id);
      return { resumed: runs.length };
    },
  };
}

const round = (n: number): number => Math.round(n * 10_000) / 10_000;
