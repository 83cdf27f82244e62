/**
 * Agents and their executions as the rest of Prism sees them: a named agent (`<name>:<version>` with its config),
 * an execution record (status, mode, response, usage and the steps the loop took), and the normalised request an
 * execution runs from — inputs reduced to references, so a stored request is small and can be resumed after a
 * restart.
 */
import type { Status } from './prediction';
import type { StoredSkillRef } from './skill';

export const SERVICE_TIERS = ['standard', 'flex', 'priority'] as const;
export type ServiceTier = (typeof SERVICE_TIERS)[number];

/** Spec: standard/default 1×, flex 0.5×, priority 1.8×; auto or null resolve to standard. */
export const TIER_MULTIPLIER: Readonly<Record<ServiceTier, number>> = { standard: 1, flex: 0.5, priority: 1.8 };

export type ExecutionMode = 'agent' | 'program';

/** One named input, reduced to what the runtime needs. Media always travel as a source string (id or URL). */
export type ExecutionInput =
  | { kind: 'media'; source: string; family: 'image' | 'document' | 'video' | 'audio' | 'unknown' }
  | { kind: 'text'; text: string }
  | { kind: 'json'; value: unknown }
  | { kind: 'list'; items: ExecutionInput[] };

/** A skill as an execution names it: stored (id or name plus version) or an inline zip kept as an artifact. */
export type ExecutionSkillRef = StoredSkillRef;

export interface ExecutionRequest {
  /** The model as requested, suffix included (`prism-orion-2:pro`). */
  model: string;
  prompt: string | null;
  jsonSchema: Record<string, unknown> | null;
  skills: ExecutionSkillRef[];
  /** Exact tool names (`config.tools`); null = every tool the toolsets allow. */
  tools: string[] | null;
  toolsets: string[] | null;
  serviceTier: ServiceTier;
  /** What the caller asked for; `execution_mode` on the record says what actually ran. */
  mode: ExecutionMode;
  inputs: Record<string, ExecutionInput>;
  metadata: Record<string, unknown>;
  batch: boolean;
  /**
   * Tools whose calls wait for a person's approval (`config.require_approval`; absent on requests stored before
   * pauses existed). A run with this set (even empty) may pause: tools that declare `needsApproval` pause it too.
   */
  requireApproval?: string[];
  /** Registered remote MCP servers whose tools join the run (`config.mcp_servers`; absent: none). */
  mcpServers?: string[];
  /** The caller's own id and timestamp for the request, kept for reference. */
  clientId: string | null;
  clientCreatedAt: string | null;
}

/** What one loop step did: a planner turn, a tool call, or a program step. */
export interface ExecutionStep {
  index: number;
  kind: 'plan' | 'tool';
  /** The skill-graph state this step worked towards, when a skill declares a graph. */
  goal: string | null;
  /** Tool name, or the model that planned. */
  name: string;
  toolCallId: string | null;
  arguments: Record<string, unknown> | null;
  output: Record<string, unknown> | null;
  error: string | null;
  durationMs: number;
  inputTokens: number;
  outputTokens: number;
}

/** The execution usage object (spec "Usage"). */
export interface ExecutionUsage {
  elements_processed: number;
  element_type: 'image' | 'page' | 'video' | 'audio' | null;
  credits_used: number;
  steps: number;
  message: string | null;
  duration_seconds: number;
  service_tier: ServiceTier;
  mode_multiplier: number;
  standard_cost_dollars: number;
  cost_dollars: number;
  savings_dollars: number;
}

/**
 * What a `paused` execution waits for: a person's decision on a tool call (approve, reject with a reason, or edit
 * its arguments), or an answer to the question a skill-graph state asks; and until when it waits.
 */
export interface ExecutionPause {
  kind: 'tool_approval' | 'question';
  toolCall: { id: string; name: string; arguments: Record<string, unknown> } | null;
  question: string | null;
  goal: string | null;
  pausedAt: string;
  expiresAt: string;
}

export interface Execution {
  id: string;
  orgId: string;
  agentId: string | null;
  name: string;
  model: string;
  status: Status;
  executionMode: ExecutionMode;
  request: ExecutionRequest;
  response: Record<string, unknown> | null;
  usage: ExecutionUsage;
  steps: ExecutionStep[];
  errorMessage: string | null;
  callbackUrl: string | null;
  sessionId: string | null;
  attempts: number;
  /** Set while `paused`: what the run waits for. */
  pause: ExecutionPause | null;
  createdAt: Date;
  completedAt: Date | null;
}

/** A named agent: `<name>:<version>` with the config its executions start from. */
export interface AgentRecord {
  id: string;
  orgId: string;
  name: string;
  version: string;
  description: string | null;
  config: {
    prompt: string | null;
    jsonSchema: Record<string, unknown> | null;
    skills: ExecutionSkillRef[];
    tools: string[] | null;
    toolsets: string[] | null;
    serviceTier: ServiceTier;
    mode: ExecutionMode;
    model: string | null;
    /** Tools whose calls wait for approval in this agent's runs (absent on agents stored before pauses). */
    requireApproval?: string[];
    /** Remote MCP servers whose tools join this agent's runs (absent on agents stored before them). */
    mcpServers?: string[];
  };
  inputs: Record<string, unknown> | null;
  createdAt: Date;
}

/** A compiled program: the tool calls of a successful run with arguments bound to inputs and earlier outputs. */
export interface SkillProgram {
  skillId: string;
  skillVersion: string;
  /** Input-slot signature (slot names and kinds) the program was compiled for. */
  signature: string;
  program: ProgramDefinition;
  sourceExecutionId: string | null;
  verifiedAt: Date | null;
  createdAt: Date;
}

/** A value in a program: a literal, or a reference to an input slot or an earlier step's output. */
export type ProgramValue =
  { $literal: unknown } | { $ref: string } | { $object: Record<string, ProgramValue> } | { $array: ProgramValue[] };

export interface ProgramDefinition {
  version: 1;
  steps: { id: string; tool: string; args: ProgramValue; goal: string | null }[];
  /** How the final response is assembled from step outputs and inputs. */
  response: ProgramValue;
}

export function emptyExecutionUsage(tier: ServiceTier): ExecutionUsage {
  return {
    elements_processed: 0,
    element_type: null,
    credits_used: 0,
    steps: 0,
    message: null,
    duration_seconds: 0,
    service_tier: tier,
    mode_multiplier: TIER_MULTIPLIER[tier],
    standard_cost_dollars: 0,
    cost_dollars: 0,
    savings_dollars: 0,
  };
}
