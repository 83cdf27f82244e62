/**
 * The evaluations tables' rows as both SQL dialects answer them, and their mapping to domain records: written once,
 * imported by the SQLite and the PostgreSQL stores alike, so neither backend imports the other.
 */
import type { EvaluationItem, EvaluationRun, SourceItem } from '../../domain/evaluation';

export interface RunRow {
  id: string;
  org_id: string;
  kind: EvaluationRun['kind'];
  parent_id: string | null;
  source_type: EvaluationRun['sourceType'];
  source_id: string;
  source_label: string;
  source_version: string | null;
  status: EvaluationRun['status'];
  config_json: string;
  accuracy: number | null;
  api_completion_rate: number | null;
  total_items: number;
  total_with_feedback: number;
  data_from: string | null;
  data_to: string | null;
  results_json: string;
  error_message: string | null;
  attempts: number;
  created_at: string;
  completed_at: string | null;
}

export interface ItemRow {
  position: number;
  entity_type: EvaluationItem['entityType'];
  entity_id: string;
  detail_json: string;
}

export interface SourceRow {
  entity_type: SourceItem['entityType'];
  id: string;
  status: string;
  response_json: string | null;
  created_at: string;
  fb_response: string | null;
  fb_notes: string | null;
  fb_id: string | null;
}

export const date = (v: string | null): Date | null => (v === null ? null : new Date(v));

export const toRun = (r: RunRow): EvaluationRun => ({
  id: r.id,
  orgId: r.org_id,
  kind: r.kind,
  parentId: r.parent_id,
  sourceType: r.source_type,
  sourceId: r.source_id,
  sourceLabel: r.source_label,
  sourceVersion: r.source_version,
  status: r.status,
  config: JSON.parse(r.config_json) as EvaluationRun['config'],
  accuracy: r.accuracy,
  apiCompletionRate: r.api_completion_rate,
  totalItems: r.total_items,
  totalWithFeedback: r.total_with_feedback,
  dataFrom: date(r.data_from),
  dataTo: date(r.data_to),
  results: JSON.parse(r.results_json) as Record<string, unknown>,
  errorMessage: r.error_message,
  attempts: r.attempts,
  createdAt: new Date(r.created_at),
  completedAt: date(r.completed_at),
});

export const toItem = (r: ItemRow): EvaluationItem => ({
  position: r.position,
  entityType: r.entity_type,
  entityId: r.entity_id,
  detail: JSON.parse(r.detail_json) as Record<string, unknown>,
});

export const toSourceItem = (r: SourceRow): SourceItem => ({
  entityType: r.entity_type,
  entityId: r.id,
  status: r.status,
  response: r.response_json === null ? null : (JSON.parse(r.response_json) as unknown),
  createdAt: new Date(r.created_at),
  feedback:
    r.fb_id === null
      ? null
      : {
          response: r.fb_response === null ? null : (JSON.parse(r.fb_response) as Record<string, unknown>),
          notes: r.fb_notes,
        },
});
