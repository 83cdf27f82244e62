/**
 * Wire shapes of agents and executions: the execute and create bodies real clients send (the
 * documented execute body plus what the SDKs add: `toolsets`, `config.mode`/`orchestration_mode`, legacy
 * `file_ids`/`urls`, requests with no `model` or `batch`), and the one mapper from an execution record to JSON.
 */
import { z } from 'zod';
import type {
  AgentRecord,
  Execution,
  ExecutionMode,
  ExecutionPause,
  ExecutionStep,
  ServiceTier,
} from '../domain/execution';
import type { ExecuteCommand, ResumeDecision } from '../services/executions/executions.types';
import { pagination } from './common.schemas';
import { fieldError } from './validation';

const skillEntrySchema = z
  .object({
    type: z.enum(['skill_reference', 'inline']).nullish(),
    skill_id: z.string().min(1).nullish(),
    skill_name: z.string().min(1).nullish(),
    skill_version: z.union([z.string().min(1), z.number().int()]).nullish(),
    version: z.union([z.string().min(1), z.number().int()]).nullish(),
    name: z.string().nullish(),
    description: z.string().nullish(),
    source: z
      .object({ type: z.string().optional(), media_type: z.string().optional(), data: z.string().optional() })
      .nullish(),
    data: z.string().nullish(),
    bundle: z.string().nullish(),
  })
  .loose();

const configSchema = z
  .object({
    prompt: z.string().nullish(),
    json_schema: z.record(z.string(), z.unknown()).nullish(),
    response_schema: z.record(z.string(), z.unknown()).nullish(),
    skills: z.array(skillEntrySchema).nullish(),
    tools: z.array(z.string().min(1)).nullish(),
    service_tier: z.enum(['auto', 'default', 'standard', 'flex', 'priority']).nullish(),
    mode: z.enum(['agent', 'program']).nullish(),
    execution_mode: z.enum(['agent', 'program']).nullish(),
    orchestration_mode: z.boolean().nullish(),
    model: z.string().min(1).nullish(),
    caching: z.boolean().nullish(),
    tool_type: z.enum(['document', 'image', 'video', 'multimodal']).nullish(),
    /** Prism extension (docs/agent-runs.md): tools whose calls wait for a person's approval. */
    require_approval: z.array(z.string().min(1)).max(64).nullish(),
    /** Prism extension (docs/agents.md): registered remote MCP servers whose tools join the run. */
    mcp_servers: z.array(z.string().min(1).max(32)).max(8).nullish(),
  })
  .loose();

export const executeBodySchema = z
  .object({
    name: z.string().min(1).nullish(),
    version: z.string().min(1).nullish(),
    inputs: z.record(z.string(), z.unknown()).nullish(),
    batch: z.boolean().nullish(),
    model: z.string().min(1).nullish(),
    id: z.string().nullish(),
    created_at: z.string().nullish(),
    callback_url: z.string().min(1).nullish(),
    config: configSchema.nullish(),
    metadata: z.record(z.string(), z.unknown()).nullish(),
    toolsets: z.array(z.string()).nullish(),
    file_ids: z.array(z.string().min(1)).nullish(),
    urls: z.array(z.string().min(1)).nullish(),
    /** Prism extension (docs/agent-runs.md): answer with the run's events (SSE) instead of the record. */
    stream: z.boolean().nullish(),
  })
  .loose();

type ResumeAction = ResumeDecision['action'];

/** `POST /v1/agent/executions/{id}/resume` (docs/agent-runs.md): a person's decision on what a paused run waits for. */
export const resumeBodySchema = z.object({
  action: z.enum(['approve', 'reject', 'edit', 'answer']),
  /** reject: why (the planner reads it as the tool's error). */
  reason: z.string().max(4000).nullish(),
  /** edit: the arguments the call runs with instead. */
  arguments: z.record(z.string(), z.unknown()).nullish(),
  /** answer: the reply to a skill-graph state's question. */
  text: z.string().max(20_000).nullish(),
  /** Answer with the run's events (SSE) from the resume on, instead of waiting for the record. */
  stream: z.boolean().nullish(),
});

/** The service's decision from a resume body. @throws the spec's 422 for an edit without arguments. */
export function toResumeDecision(body: z.output<typeof resumeBodySchema>): ResumeDecision {
  switch (body.action) {
    case 'approve':
      return { action: 'approve' };
    case 'reject':
      return { action: 'reject', reason: body.reason ?? '' };
    case 'edit':
      if (!body.arguments) throw fieldError('body', 'arguments', 'missing', 'Field required for action edit', body);
      return { action: 'edit', arguments: body.arguments };
    case 'answer':
      if (body.text === null || body.text === undefined) {
        throw fieldError('body', 'text', 'missing', 'Field required for action answer', body);
      }
      return { action: 'answer', text: body.text };
  }
}

export const createAgentBodySchema = z
  .object({
    name: z.string().min(1).max(200).nullish(),
    version: z.string().min(1).max(100).nullish(),
    description: z.string().max(4000).nullish(),
    inputs: z.record(z.string(), z.unknown()).nullish(),
    config: configSchema.nullish(),
    model: z.string().min(1).nullish(),
    callback_url: z.string().min(1).nullish(),
    toolsets: z.array(z.string()).nullish(),
  })
  .loose();

export const lookupAgentBodySchema = z
  .object({ id: z.string().min(1).nullish(), name: z.string().min(1).nullish(), prompt: z.string().min(1).nullish() })
  .loose();

export const listExecutionsQuerySchema = pagination({ max: 1000, default: 10 });
export const executionIdParamsSchema = z.object({ id: z.string().min(1).max(200) });

type ConfigWire = z.output<typeof configSchema>;

export function tierOf(tier: ConfigWire['service_tier']): ServiceTier {
  return tier === 'flex' || tier === 'priority' ? tier : 'standard';
}

export function modeOf(config: ConfigWire | null | undefined): ExecutionMode {
  return requestedModeOf(config) ?? 'agent';
}

/** The mode a request asks for (`mode`, `execution_mode`, or TS-SDK `orchestration_mode`), null when it says none. */
export function requestedModeOf(config: ConfigWire | null | undefined): ExecutionMode | null {
  if (config?.mode) return config.mode;
  if (config?.execution_mode) return config.execution_mode;
  if (config?.orchestration_mode === true) return 'program';
  if (config?.orchestration_mode === false) return 'agent';
  return null;
}

/** The agent settings an execute body and a create body both carry (prompt, schema, skills, tools, toolsets, tier). */
export function agentSettingsOf(body: {
  config?: ConfigWire | null | undefined;
  toolsets?: string[] | null | undefined;
}) {
  const config = body.config ?? undefined;
  return {
    prompt: config?.prompt ?? null,
    jsonSchema: config?.json_schema ?? config?.response_schema ?? null,
    skills: config?.skills ?? [],
    tools: config?.tools ?? null,
    toolsets: body.toolsets ?? null,
    requireApproval: config?.require_approval ?? null,
    mcpServers: config?.mcp_servers ?? null,
    serviceTier: tierOf(config?.service_tier),
  };
}

/** Real clients' model ids (`vlmrun-orion-1:auto`) name ours (`prism-orion-1:auto`). */
export function modelOf(model: string | null | undefined): string | null {
  if (!model) return null;
  return model.replace(/^vlmrun-orion-/, 'prism-orion-');
}

export function toExecuteCommand(body: z.output<typeof executeBodySchema>): ExecuteCommand {
  const config = body.config ?? undefined;
  const inputs: Record<string, unknown> = { ...(body.inputs ?? {}) };
  if (body.file_ids?.length) inputs.files = body.file_ids.map((file_id) => ({ type: 'input_file', file_id }));
  if (body.urls?.length) inputs.urls = body.urls.map((url) => ({ type: 'file_url', file_url: { url } }));
  const name =
    body.name && body.version && !body.name.includes(':') && body.version !== 'latest'
      ? `${body.name}:${body.version}`
      : (body.name ?? null);
  return {
    name,
    model: modelOf(body.model ?? config?.model),
    inputs,
    batch: body.batch ?? false,
    callbackUrl: body.callback_url ?? null,
    ...agentSettingsOf(body),
    mode: requestedModeOf(config),
    metadata: body.metadata ?? {},
    clientId: body.id ?? null,
    clientCreatedAt: body.created_at ?? null,
  };
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/** The execution record exactly as the spec lists it (plus `model`); `response` is an object or null. */
export function toExecutionWire(e: Execution) {
  return {
    id: e.id,
    name: e.name,
    model: e.model,
    status: e.status,
    execution_mode: e.executionMode,
    response: e.response,
    usage: e.usage,
    steps: e.steps.map(toStepWire),
    created_at: e.createdAt.toISOString(),
    completed_at: iso(e.completedAt),
    ...(e.pause ? { pause: toPauseWire(e.pause) } : {}),
  };
}

/**
 * What a `paused` execution waits for (a Prism extension beside the spec's `paused` status, docs/agent-runs.md):
 * present only while it is paused, with the call that resumes it.
 */
export function toPauseWire(p: ExecutionPause) {
  return {
    kind: p.kind,
    tool_call: p.toolCall ? { id: p.toolCall.id, name: p.toolCall.name, arguments: p.toolCall.arguments } : null,
    question: p.question,
    goal: p.goal,
    paused_at: p.pausedAt,
    expires_at: p.expiresAt,
    resume: (p.kind === 'question' ? ['answer', 'reject'] : ['approve', 'reject', 'edit']) as ResumeAction[],
  };
}

/**
 * One recorded step on the execution record: what ran, with what arguments, how it ended and what it used. Tool
 * outputs (OCR text, layouts) stay out of the record; the `steps.json` artifact has them whole.
 */
function toStepWire(step: ExecutionStep) {
  return {
    index: step.index,
    kind: step.kind,
    goal: step.goal,
    name: step.name,
    tool_call_id: step.toolCallId,
    arguments: step.arguments,
    error: step.error,
    duration_ms: step.durationMs,
    input_tokens: step.inputTokens,
    output_tokens: step.outputTokens,
  };
}

export function toAgentWire(a: AgentRecord) {
  return {
    id: a.id,
    name: a.name,
    version: a.version,
    description: a.description,
    prompt: a.config.prompt,
    json_schema: a.config.jsonSchema,
    tools: a.config.tools,
    toolsets: a.config.toolsets,
    model: a.config.model,
    service_tier: a.config.serviceTier,
    mode: a.config.mode,
    skills: a.config.skills,
    inputs: a.inputs,
    status: 'completed',
    created_at: a.createdAt.toISOString(),
    updated_at: a.createdAt.toISOString(),
  };
}
