/**
 * Evaluations: a run scores the stored responses of one source (a hub domain's predictions, an agent's executions,
 * or everything that used a skill) against the feedback callers left on them; a rerun re-processes the same items
 * with another skill and scores them again. These are the records the evaluation store keeps and the HTTP layer
 * renders.
 */
import type { FeedbackEntityType } from './feedback';

export const EVALUATION_SOURCE_TYPES = ['agent', 'request_domain', 'skill'] as const;
export type EvaluationSourceType = (typeof EVALUATION_SOURCE_TYPES)[number];

export const EVALUATORS = ['field_accuracy', 'fuzzy_field_match', 'llm_judge', 'equals_expected'] as const;
export type EvaluatorName = (typeof EVALUATORS)[number];

export type EvaluationStatus = 'pending' | 'running' | 'completed' | 'failed';

/** What a run was asked to do; stored with the record so the job can run from it alone. */
export interface EvaluationConfig {
  evaluators: EvaluatorName[];
  inferCorrections: boolean;
  skipNullExpected: boolean;
  /** Normalised string similarity at or above which `fuzzy_field_match` counts a field as matched. */
  fuzzyThreshold: number;
  /** Most items a run reads (newest first). */
  maxItems: number;
  /** A rerun: the skill version that re-processes the parent's items. */
  skill?: { id: string; name: string; skillVersion: string } | null;
}

export interface EvaluationRun {
  id: string;
  orgId: string;
  kind: 'run' | 'rerun';
  parentId: string | null;
  sourceType: EvaluationSourceType;
  /** Domain name, agent `<name>:<version>` (or bare name), or skill name. */
  sourceId: string;
  sourceLabel: string;
  sourceVersion: string | null;
  status: EvaluationStatus;
  config: EvaluationConfig;
  accuracy: number | null;
  apiCompletionRate: number | null;
  totalItems: number;
  totalWithFeedback: number;
  dataFrom: Date | null;
  dataTo: Date | null;
  results: Record<string, unknown>;
  errorMessage: string | null;
  /** Times the job started (a restart resumes a run at most once; see src/jobs/restart-policy.ts). */
  attempts: number;
  createdAt: Date;
  completedAt: Date | null;
}

/** One stored response of a source with the newest feedback on it, as a run reads it. */
export interface SourceItem {
  entityType: Extract<FeedbackEntityType, 'request' | 'agent_execution'>;
  entityId: string;
  status: string;
  response: unknown;
  createdAt: Date;
  feedback: { response: Record<string, unknown> | null; notes: string | null } | null;
}

/** The per-item record of a run (`GET /v1/evaluations/{id}/results`). */
export interface EvaluationItem {
  position: number;
  entityType: SourceItem['entityType'];
  entityId: string;
  detail: Record<string, unknown>;
}
