/**
 * The executions tables' rows as both SQL dialects answer them, and their mapping to domain records: written once,
 * imported by the SQLite and the PostgreSQL stores alike, so neither backend imports the other.
 */
import type { Execution } from '../../domain/execution';
import type { Status } from '../../domain/prediction';

export interface ExecutionRow {
  id: string;
  org_id: string;
  agent_id: string | null;
  name: string;
  model: string;
  status: Status;
  execution_mode: Execution['executionMode'];
  request_json: string;
  response_json: string | null;
  usage_json: string;
  steps_json: string;
  error_message: string | null;
  callback_url: string | null;
  session_id: string | null;
  attempts: number;
  /** Added by migration 012. */
  pause_json: string | null;
  created_at: string;
  completed_at: string | null;
}

export const toExecution = (r: ExecutionRow): Execution => ({
  id: r.id,
  orgId: r.org_id,
  agentId: r.agent_id,
  name: r.name,
  model: r.model,
  status: r.status,
  executionMode: r.execution_mode,
  request: JSON.parse(r.request_json) as Execution['request'],
  response: r.response_json === null ? null : (JSON.parse(r.response_json) as Execution['response']),
  usage: JSON.parse(r.usage_json) as Execution['usage'],
  steps: JSON.parse(r.steps_json) as Execution['steps'],
  errorMessage: r.error_message,
  callbackUrl: r.callback_url,
  sessionId: r.session_id,
  attempts: r.attempts,
  pause: r.pause_json ? (JSON.parse(r.pause_json) as Execution['pause']) : null,
  createdAt: new Date(r.created_at),
  completedAt: r.completed_at ? new Date(r.completed_at) : null,
});
