/**
 * What the evaluations service asks of persistence: run records with their per-item details, and the items of a
 * source (stored responses with the newest feedback on each) read in one query so a run over thousands of items
 * stays a single pass. Every read is scoped by organisation, except the job runner's `getById` and `unfinished`.
 */
import type {
  EvaluationItem,
  EvaluationRun,
  EvaluationSourceType,
  EvaluationStatus,
  SourceItem,
} from '../../domain/evaluation';

export interface EvaluationListQuery {
  limit: number;
  offset: number;
  descending: boolean;
  createdFrom: Date | null;
  createdTo: Date | null;
}

export interface SourceQuery {
  sourceType: EvaluationSourceType;
  sourceId: string;
  /** Agent version (`<name>:<version>`), when named. */
  sourceVersion: string | null;
  dataFrom: Date | null;
  dataTo: Date | null;
  maxItems: number;
}

/** What finishing a run writes: the record's figures and results as EvaluationRun types them, its end state and time. */
export type EvaluationOutcome = Pick<
  EvaluationRun,
  | 'accuracy'
  | 'apiCompletionRate'
  | 'totalItems'
  | 'totalWithFeedback'
  | 'dataFrom'
  | 'dataTo'
  | 'results'
  | 'errorMessage'
> & {
  status: Extract<EvaluationStatus, 'completed' | 'failed'>;
  completedAt: Date;
};

export interface EvaluationStore {
  insert(run: EvaluationRun): Promise<EvaluationRun>;
  get(orgId: string, id: string): Promise<EvaluationRun | null>;
  /** For the job runner, which works across organisations. */
  getById(id: string): Promise<EvaluationRun | null>;
  list(orgId: string, query: EvaluationListQuery): Promise<{ data: EvaluationRun[]; count: number }>;
  /** Moves a pending/running run to `running` (compare-and-set); null when it is not in one of those states. */
  start(id: string): Promise<EvaluationRun | null>;
  /** Writes the outcome and the items in one transaction, only while the run is `running`. */
  finish(id: string, outcome: EvaluationOutcome, items: EvaluationItem[]): Promise<EvaluationRun | null>;
  items(orgId: string, id: string, page: { offset: number; limit: number }): Promise<EvaluationItem[]>;
  /** Every item of a run, in order (a rerun reads its parent's). */
  allItems(id: string): Promise<EvaluationItem[]>;
  /** @returns false when the caller's organisation has no such run. */
  delete(orgId: string, id: string): Promise<boolean>;
  /** Runs not finished when the process stopped. */
  unfinished(): Promise<EvaluationRun[]>;
  /** The newest `maxItems` stored responses of a source in the date range, each with its newest feedback. */
  sourceItems(orgId: string, query: SourceQuery): Promise<SourceItem[]>;
  /** Runs per source, for the summary and the list of sources. */
  sourceCounts(orgId: string): Promise<Array<{ type: EvaluationSourceType; label: string; count: number }>>;
  /** Completed runs, newest first, optionally of one source type and label. */
  completed(
    orgId: string,
    query: { limit: number; sourceType: EvaluationSourceType | null; sourceLabel: string | null },
  ): Promise<EvaluationRun[]>;
}
