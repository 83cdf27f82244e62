/**
 * The executions service's contract: what it is asked (ExecuteCommand, ExecuteOptions), what it needs
 * (ExecutionsServiceDeps, the PlannerDirectory) and what it offers (ExecutionsService). Its use cases (execute.ts,
 * execution-run.ts, execution-resume.ts) and their callers import it from here; executions.service.ts composes them.
 */
import type { Principal } from '../../domain/account';
import type { Execution, ExecutionMode, ExecutionStep, ServiceTier } from '../../domain/execution';
import type { SkillResolver } from '../../domain/skill';
import type { JobDelivery } from '../../jobs/job-queue';
import type { Logger } from '../../lib/logger';
import type { SignalBus } from '../../signals/signal-bus';
import type { AgentRuntime } from '../../agents/agent-runtime';
import type { PauseDecision, PlannerModel } from '../../agents/sdk';
import type { ToolRegistry } from '../../agents/tool-registry';
import type { AgentStore, ExecutionStore, ProgramStore } from '../../stores/types/execution';
import type { McpServersService } from '../agent-mcp/mcp-servers.service';
import type { ArtifactsService } from '../artifacts.service';
import type { FilesService } from '../files.service';
import type { ToolContextFactory } from '../tool-context';
import type { SkillEntryWire } from './execution-skills';
import type { ExecutionBilling, PlannerPricing } from './execution-usage';
import type { KeyModelCheck } from '../admin/key-model-check';

/** The planner behind an agent model id (suffix included), as the composition root resolves it. */
export interface ResolvedPlanner {
  /** The catalogue model that plans (e.g. `prism-orion-2`). */
  modelId: string;
  planner: PlannerModel;
  pricing: PlannerPricing;
  /** Program mode applies (the second-generation agent model). */
  programCapable: boolean;
}

export interface PlannerDirectory {
  /** @throws AppError 404 `model_not_found` for an unknown model. */
  resolve(model: string): ResolvedPlanner;
}

export interface ExecuteCommand {
  name: string | null;
  model: string | null;
  inputs: Record<string, unknown> | null;
  batch: boolean;
  callbackUrl: string | null;
  prompt: string | null;
  jsonSchema: Record<string, unknown> | null;
  skills: SkillEntryWire[];
  tools: string[] | null;
  toolsets: string[] | null;
  /** `config.require_approval`: tools whose calls wait for a person's approval (null: the agent's, else none). */
  requireApproval: string[] | null;
  /** `config.mcp_servers`: registered remote MCP servers whose tools join the run (null: the agent's, else none). */
  mcpServers: string[] | null;
  serviceTier: ServiceTier;
  /** `config.mode` / `orchestration_mode`; null when the request does not say (a named agent's own mode, else agent). */
  mode: ExecutionMode | null;
  metadata: Record<string, unknown>;
  clientId: string | null;
  clientCreatedAt: string | null;
}

export interface ExecutionsServiceDeps {
  store: ExecutionStore;
  agents: AgentStore;
  programs: ProgramStore;
  tools: ToolRegistry;
  runtime: AgentRuntime;
  toolContext: ToolContextFactory;
  planners: PlannerDirectory;
  billing: ExecutionBilling;
  /** A key's allow-list of models (docs/admin.md), asked of the planner model a run names. */
  checkKeyModel?: KeyModelCheck;
  skills: SkillResolver | null;
  files: Pick<FilesService, 'get'>;
  artifacts: Pick<ArtifactsService, 'write' | 'read' | 'writeSoon'>;
  orgIdFor(principal: Principal): Promise<string>;
  enqueue(id: string): void;
  /** PRISM_ALLOW_PRIVATE_URLS: callbacks to private and loopback hosts are accepted (tests, closed networks). */
  allowPrivateCallbacks?: boolean;
  /** Sends the execution's webhook: when it ends, and when it pauses to wait for a person. */
  onFinished(execution: Execution): void;
  /**
   * Signals between replicas (src/signals): "execution `id` changed" after each saved step and status change, for
   * whoever follows it (the run-events stream; a publish nobody listens to costs next to nothing), and cancels of
   * runs going on in another replica. Without it, events are found by polling and cancels reach this process only.
   */
  signals?: SignalBus;
  limits: { maxSteps: number; deadlineMs: number; pauseTtlMs: number };
  logger: Logger;
  /** Remote MCP servers as tools (`config.mcp_servers`); without it, a request naming one is refused. */
  mcpServers?: RunMcpServers;
}

/** What runs need of the MCP servers service (services/agent-mcp). */
export type RunMcpServers = Pick<McpServersService, 'checkNames' | 'toolsForRun'>;

/** How a caller that waits for a run (MCP's execute_agent) follows and stops it. */
export interface ExecuteOptions {
  /** Aborting it cancels the run: it ends `failed` with a message saying so. Ignored for `batch` runs. */
  signal?: AbortSignal;
  /** Called once per recorded step (plan or tool) while the run goes on, with the steps so far. */
  onStep?(step: ExecutionStep, stepsSoFar: number): void;
  /** Returns the accepted record at once and runs it in this process (a streamed execute follows its events). */
  detach?: boolean;
  /**
   * The answer's text as the planner writes it (runs without a response schema, on a planner that streams): a
   * streamed execute passes it on live. Nothing of it is stored; the record's answer is the whole text.
   */
  onText?: (delta: string) => void;
}

/** A person's answer to a paused run, as the resume endpoint, MCP and agent chat send it. */
export type ResumeDecision = PauseDecision;

export interface ExecutionsService {
  execute(principal: Principal, command: ExecuteCommand, options?: ExecuteOptions): Promise<Execution>;
  list(principal: Principal, page: { skip: number; limit: number }): Promise<Execution[]>;
  /** @throws NotFoundError (`execution_not_found`) also for other organisations' executions. */
  get(principal: Principal, id: string): Promise<Execution>;
  /**
   * Runs a queued execution (the job queue's handler). A redelivered job whose record says `running` lost its
   * replica: the run is taken over from its checkpoint (a redelivery counts as a start of the restart policy).
   */
  runJob(id: string, delivery?: JobDelivery): Promise<void>;
  /**
   * After a restart: resumes interrupted runs from their checkpoints or fails them with a message. With a shared
   * queue (`takeOverRunning: false`) runs another replica holds are left to it (the queue's leases hand them over).
   */
  resumeUnfinished(options?: { takeOverRunning?: boolean }): Promise<{ resumed: number; failed: number }>;
  /**
   * With several replicas (execution-lease.ts): marks the runs going on in this process as alive, so other replicas
   * know their replica is.
   */
  heartbeat(): Promise<void>;
  /**
   * Fails the synchronous runs (not `batch`) that no replica marked alive for `silentMs`: their replica died, and
   * no queue hands them over. @returns how many it failed.
   */
  failStalled(silentMs: number): Promise<number>;
  /** Stops running executions for a shutdown; they stay `running` and resume after the restart. */
  cancelAll(): void;
  /**
   * Continues a paused run with a person's decision and waits for it to end or pause again (`detach`: returns the
   * running record at once). @throws ConflictError (409 `execution_not_paused`) when it is not paused, BadRequest
   * for a decision that does not fit what it waits for; 402 when the wallet cannot hold the rest of the run.
   */
  resume(principal: Principal, id: string, decision: ResumeDecision, options?: ExecuteOptions): Promise<Execution>;
  /**
   * Cancels a paused or running run: it ends `failed` with a message saying so (a running one on another replica
   * is told through the signal bus); the answer waits up to 10 s for a running run to end.
   * @throws ConflictError (409 `execution_finished`) when it already ended.
   */
  cancel(principal: Principal, id: string): Promise<Execution>;
  /** Fails paused runs whose wait expired (PRISM_AGENT_PAUSE_TTL_S), with a message saying what they waited for. */
  expirePaused(now?: Date): Promise<number>;
  /**
   * The execution's record each time it changes (the first one at once), until it ends or `signal` aborts: the
   * store is read on each "something new" signal and every `pollMs`, so it follows runs on any replica.
   * @throws NotFoundError (before the first record) for unknown ids and other organisations' executions.
   */
  follow(principal: Principal, id: string, signal: AbortSignal, pollMs?: number): Promise<AsyncIterable<Execution>>;
}

export const DEFAULT_AGENT_MODEL = 'prism-orion-1:auto';
