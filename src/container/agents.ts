/**
 * The agent part of the composition root: the tool registry, the per-call ToolContext factory (the SDK's ports
 * bound to the services), the runtime with its SQLite checkpoints (LangGraph's SqliteSaver tables on the app's
 * own database file, written by the lean saver), the planner directory (an agent model id → an upstream chat model with tool calling through the
 * gateway, or the deterministic planner), the agents and executions services, the skill runner the generate
 * endpoints use for skills that call for the runtime, and the re-run of stored executions for evaluation reruns. MCP and the HTTP routes take what this returns.
 */
import { createAgentRuntime, type AgentRuntime } from '../agents/agent-runtime';
import { BUILTIN_GRAPHS } from '../../agent-graphs';
import { createDeterministicPlanner } from '../agents/planners/deterministic.planner';
import type { VisionPort } from '../agents/sdk';
import { createToolRegistry, type ToolRegistry } from '../agents/tool-registry';
import type { Execution } from '../domain/execution';
import type { SkillResolver } from '../domain/skill';
import { createUpstreamPlanner, plannerModelFor } from '../gateway/agents/agent-planner';
import { maxCallMicros, priceCall, type Biller, type CallCost, type ChargeInput } from '../metering/billing';
import { ModelNotFoundError } from '../gateway/gateway-errors';
import type { ModelCatalogue } from '../gateway/catalogue/model-catalogue';
import type { UpstreamClient } from '../gateway/upstream/upstream-client';
import type { Logger } from '../lib/logger';
import type { SignalBus } from '../signals/signal-bus';
import { createAgentsService, type AgentsService } from '../services/agents.service';
import type { ArtifactsService } from '../services/artifacts.service';
import { createExecutionsService } from '../services/executions/executions.service';
import type { ExecutionsService, PlannerDirectory } from '../services/executions/executions.types';
import {
  STEP_BUDGET,
  type ExecutionBilling,
  type ExecutionChargeInput,
  type ExecutionCost,
} from '../services/executions/execution-usage';
import type { FilesService } from '../services/files.service';
import type { HubService } from '../services/hub/hub.service';
import type { InputResolverDeps } from '../services/inputs/resolve-input';
import { createExecutionRerun, type ExecutionRerun } from '../services/executions/execution-rerun';
import { createSkillRunner } from '../services/executions/runtime-skill-runner';
import type { SkillRunner } from '../services/predictions/skill-runner';
import { createToolContextFactory, type ToolContextDeps, type ToolContextFactory } from '../services/tool-context';
import type { AgentStore, ExecutionStore, ProgramStore } from '../stores/types/execution';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { CheckpointDurability } from '../agents/checkpoint-durability';
import { createSecretBox } from '../lib/secret-box';
import { createMcpServersService, type McpServersService } from '../services/agent-mcp/mcp-servers.service';
import type { McpServerStore } from '../stores/types/mcp-server';
import { BUILTIN_TOOLS } from '../../tools';
import { billedSpeechFor } from '../gateway/transcriptions/billed-speech';
import type { KeyModelCheck } from '../services/admin/key-model-check';
import { configuredSpeechModel } from '../gateway/transcriptions/speech-transcriber';

export interface AgentsModule {
  /** Every tool; `config.tools` and MCP select from it by exact name. */
  tools: ToolRegistry;
  /** Builds the ToolContext of one call (principal, cancel signal, progress, execution or session scope). */
  toolContext: ToolContextFactory;
  runtime: AgentRuntime;
  planners: PlannerDirectory;
  agents: AgentsService;
  executions: ExecutionsService;
  /** Runs generate requests whose skills call for the runtime (the predictions service's port). */
  skillRunner: SkillRunner;
  /** Re-runs a stored execution with another skill for evaluation reruns (nothing stored, nothing billed). */
  executionRerun: ExecutionRerun;
  /** Remote MCP servers an organisation registered; their tools join runs that name them. */
  mcpServers: McpServersService;
}

export interface AgentsModuleDeps {
  /** LangGraph checkpoints, on the backend's database. */
  checkpointer: BaseCheckpointSaver;
  /** When each step's checkpoint is written: `sync` on a shared database, `async` on SQLite (checkpoint-durability.ts). */
  checkpointDurability?: CheckpointDurability;
  stores: { executions: ExecutionStore; agents: AgentStore; programs: ProgramStore; mcpServers: McpServerStore };
  /** Remote MCP servers as tools: the secrets key and the bounds of their calls (config.agentMcp). */
  agentMcp: { secretsKey: Buffer | undefined; timeoutMs: number; maxBytes: number; maxCallsPerRun: number };
  artifacts: ArtifactsService;
  files: FilesService;
  hub: HubService;
  vision: VisionPort;
  /** A recording's duration in seconds (ffprobe), for billing the transcribe_audio tool before it calls. */
  audioDuration: (bytes: Buffer) => Promise<number | null>;
  inputs: InputResolverDeps;
  /** The agents' long-term memory (the remember and recall tools), on the LangGraph store. */
  memoryFor: ToolContextDeps['memoryFor'];
  catalogue: ModelCatalogue;
  upstream: UpstreamClient;
  /** Keyed runs hold their key's and organisation's budgets before the wallet (src/services/admin). */
  biller: Biller;
  /** A key's allow-list of models, asked of the planner model a run names (docs/admin.md). */
  checkKeyModel?: KeyModelCheck;
  skills: SkillResolver | null;
  limits: { maxSteps: number; deadlineMs: number; pauseTtlMs: number };
  /** Signals between replicas: run-event wake-ups and cancels of runs going on elsewhere. */
  signals: SignalBus;
  orgIdFor: ExecutionsServiceOrgId;
  enqueue(id: string): void;
  onFinished(execution: Execution): void;
  logger: Logger;
}

type ExecutionsServiceOrgId = Parameters<typeof createExecutionsService>[0]['orgIdFor'];

/** Agent model ids the execute endpoint takes: the two agent models and their variants (spec enum). */
const AGENT_MODEL = /^prism-orion-[12](:(auto|fast|pro|lite))?$/;

export function createAgentsModule(deps: AgentsModuleDeps): AgentsModule {
  const tools = createToolRegistry(BUILTIN_TOOLS);
  // transcribe_audio is billed to the caller's wallet per call, like the gateway's transcription route.
  const toolContext = createToolContextFactory({
    ...deps,
    speechFor: billedSpeechFor(deps, deps.vision.transcribeSpeech.bind(deps.vision)),
  });
  const runtime = createAgentRuntime({
    tools,
    graphs: BUILTIN_GRAPHS,
    checkpointer: deps.checkpointer,
    ...(deps.checkpointDurability ? { durability: deps.checkpointDurability } : {}),
    logger: deps.logger,
  });
  // Without a language model, audio is still read as words when the models file names a transcription model.
  const deterministic = createDeterministicPlanner({ transcribes: configuredSpeechModel(deps.catalogue) !== null });

  const planners: PlannerDirectory = {
    resolve(requested) {
      const model = AGENT_MODEL.test(requested) ? plannerModelFor(deps.catalogue, requested) : null;
      if (!model) throw new ModelNotFoundError(requested);
      const upstream = createUpstreamPlanner({ catalogue: deps.catalogue, upstream: deps.upstream }, model);
      return {
        modelId: model.id,
        planner: upstream ?? deterministic,
        pricing: model.pricing,
        programCapable: requested.startsWith('prism-orion-2'),
      };
    },
  };

  const org = (orgId: string, keyId: string | null = null) => ({ kind: 'org' as const, orgId, keyId });
  const chargeInput = (input: ExecutionChargeInput): ChargeInput => ({
    pricing: input.pricing,
    usage: { promptTokens: input.inputTokens, completionTokens: input.outputTokens },
    multiplier: input.multiplier,
    reason: input.reason,
    // The $0.001 minimum is the chat-completion rule: a run costs its planner's tokens × the tier, nothing more.
    minimumMicros: 0,
  });
  const costOf = (charged: CallCost): ExecutionCost => ({
    standardMicros: charged.standardMicros,
    costMicros: charged.costMicros,
  });
  const billing: ExecutionBilling = {
    authorize: (orgId) => deps.biller.authorize(org(orgId)),
    async reserve(orgId, input, keyId = null) {
      const budget = maxCallMicros(
        input.pricing,
        input.maxSteps * STEP_BUDGET.promptTokens,
        input.maxSteps * STEP_BUDGET.completionTokens,
        { multiplier: input.multiplier, minimumMicros: 0 },
      );
      const hold = await deps.biller.reserve(org(orgId, keyId), budget);
      const pricing = { multiplier: input.multiplier, minimumMicros: 0 };
      return {
        settle: async (charge) => costOf(await hold.settle({ ...chargeInput(charge), capMicros: hold.micros })),
        price: (charge) => costOf(deps.biller.price({ ...chargeInput(charge), capMicros: hold.micros })),
        release: () => hold.release(),
        keyId,
        dollars: hold.micros / 1e6,
        covers: (inputTokens, outputTokens) =>
          priceCall(input.pricing, { promptTokens: inputTokens, completionTokens: outputTokens }, pricing).costMicros <=
          hold.micros,
      };
    },
    charge: async (orgId, input) => costOf(await deps.biller.charge(org(orgId), chargeInput(input))),
    price: (input) => costOf(deps.biller.price(chargeInput(input))),
  };

  const mcpServers = createMcpServersService({
    store: deps.stores.mcpServers,
    secrets: deps.agentMcp.secretsKey ? createSecretBox(deps.agentMcp.secretsKey) : null,
    orgIdFor: deps.orgIdFor,
    settings: { ...deps.agentMcp, allowPrivate: deps.inputs.fetch.allowPrivate },
    logger: deps.logger,
  });
  const agents = createAgentsService({
    mcpServers,
    store: deps.stores.agents,
    tools,
    artifacts: deps.artifacts,
    orgIdFor: deps.orgIdFor,
  });
  const executions = createExecutionsService({
    store: deps.stores.executions,
    agents: deps.stores.agents,
    programs: deps.stores.programs,
    tools,
    runtime,
    toolContext,
    planners,
    billing,
    ...(deps.checkKeyModel ? { checkKeyModel: deps.checkKeyModel } : {}),
    skills: deps.skills,
    files: deps.files,
    artifacts: deps.artifacts,
    orgIdFor: deps.orgIdFor,
    enqueue: (id) => deps.enqueue(id),
    onFinished: (execution) => deps.onFinished(execution),
    limits: deps.limits,
    signals: deps.signals,
    logger: deps.logger,
    allowPrivateCallbacks: deps.inputs.fetch.allowPrivate,
    mcpServers,
  });
  const skillRunner = createSkillRunner({
    runtime,
    tools,
    toolContext,
    planners,
    programs: deps.stores.programs,
    billing,
    skills: deps.skills,
    artifacts: deps.artifacts,
    limits: deps.limits,
    logger: deps.logger,
  });
  const executionRerun = createExecutionRerun({
    store: deps.stores.executions,
    agents: deps.stores.agents,
    tools,
    runtime,
    toolContext,
    planners,
    limits: deps.limits,
  });
  return { tools, toolContext, runtime, planners, agents, executions, skillRunner, executionRerun, mcpServers };
}
