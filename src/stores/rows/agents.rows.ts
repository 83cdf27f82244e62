/**
 * The agents tables' rows as both SQL dialects answer them, and their mapping to domain records: written once,
 * imported by the SQLite and the PostgreSQL stores alike, so neither backend imports the other.
 */
import type { AgentRecord } from '../../domain/execution';

export interface AgentRow {
  id: string;
  org_id: string;
  name: string;
  version: string;
  description: string | null;
  config_json: string;
  inputs_json: string | null;
  created_at: string;
}

export interface ProgramRow {
  skill_id: string;
  skill_version: string;
  signature: string;
  program_json: string;
  source_execution_id: string | null;
  verified_at: string | null;
  created_at: string;
}

export const toAgent = (r: AgentRow): AgentRecord => ({
  id: r.id,
  orgId: r.org_id,
  name: r.name,
  version: r.version,
  description: r.description,
  config: JSON.parse(r.config_json) as AgentRecord['config'],
  inputs: r.inputs_json === null ? null : (JSON.parse(r.inputs_json) as AgentRecord['inputs']),
  createdAt: new Date(r.created_at),
});
