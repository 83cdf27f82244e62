/**
 * The predictions tables' rows as both SQL dialects answer them, and their mapping to domain records: written once,
 * imported by the SQLite and the PostgreSQL stores alike, so neither backend imports the other.
 */
import { type Prediction, type PredictionInput, type PredictionKind, type Status } from '../../domain/prediction';

export interface PredictionRow {
  id: string;
  org_id: string;
  kind: PredictionKind;
  model: string;
  domain: string | null;
  status: Status;
  request_json: string;
  inputs_json: string;
  response_json: string | null;
  usage_json: string;
  error_message: string | null;
  callback_url: string | null;
  attempts: number;
  created_at: string;
  completed_at: string | null;
}

export const toPrediction = (r: PredictionRow): Prediction => ({
  id: r.id,
  orgId: r.org_id,
  kind: r.kind,
  model: r.model,
  domain: r.domain,
  status: r.status,
  request: JSON.parse(r.request_json) as Prediction['request'],
  inputs: JSON.parse(r.inputs_json) as PredictionInput[],
  response: r.response_json === null ? null : (JSON.parse(r.response_json) as unknown),
  usage: JSON.parse(r.usage_json) as Prediction['usage'],
  errorMessage: r.error_message,
  callbackUrl: r.callback_url,
  attempts: r.attempts,
  createdAt: new Date(r.created_at),
  completedAt: r.completed_at ? new Date(r.completed_at) : null,
});
