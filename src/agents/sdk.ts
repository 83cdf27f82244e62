/**
 * The agent SDK: the one module `tools/` and `agent-graphs/` import.
 *
 * A tool is a zod-typed function (`defineTool`) that reaches the rest of Prism only through the narrow ports of its
 * {@link ToolContext}: media loading, the embedded vision/audio engines, artifacts, the hub, skills and the SSRF-safe
 * fetcher. The composition root binds those ports to the services, so the same tool runs inside the LangGraph loop
 * and behind MCP with nothing HTTP-shaped in between. The {@link PlannerModel} port is what the loop asks for the next
 * step: an upstream chat model with tools bound, or the deterministic planner. The graph port (end of file) is what
 * the runtime asks of the graphs in `agent-graphs/`.
 */
import { z } from 'zod';
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import type { Principal } from '../domain/account';
import { BadRequestError } from '../domain/errors';
import type { ExecutionStep } from '../domain/execution';
import type { DocumentLayout, JsonSchema, LayoutLine, LayoutPage } from '../engines/types';
import type { AudioFacts, SampledFrame, VisionPort } from '../engines/vision-port';
import type { CancelSignal } from '../lib/cancel';

export { z };
/** Why a JSON schema cannot be used (recursive, over the size budget, not a schema), or null: every route's rule. */
export { schemaProblem } from '../lib/json-schema';
export type {
  AudioFacts,
  CancelSignal,
  DocumentLayout,
  JsonSchema,
  LayoutLine,
  LayoutPage,
  Principal,
  SampledFrame,
  VisionPort,
};

// ---------------------------------------------------------------------------------------------------------------
// Ports

/** Which kind of media bytes are (sniffed from the content, never from a name). */
export type MediaFamily = 'image' | 'document' | 'video' | 'audio';

/** Bytes of one input, whatever named it (a file id, an artifact id, an http(s) URL, a data URL). */
export interface LoadedMedia {
  bytes: Buffer;
  mimeType: string;
  family: MediaFamily | 'unknown';
  filename: string | null;
}

export interface MediaPort {
  /**
   * Loads a file id (a UUID), an artifact object id (`img_ab12cd`), an http(s) URL (through the SSRF-safe
   * fetcher) or a `data:` URL. @throws AppError (`file_not_found`, `url_not_allowed`, …) naming what failed.
   */
  load(source: string): Promise<LoadedMedia>;
}

/** An artifact's metadata (its bytes live in the blob store). */
export interface ArtifactRef {
  /** `<prefix>_<6 chars>`: img_, vid_, aud_, doc_, txt_, json_, csv_, lay_ (layouts). */
  objectId: string;
  filename: string;
  mimeType: string;
  sizeBytes: number;
}

export type ArtifactKind = 'image' | 'video' | 'audio' | 'document' | 'text' | 'json' | 'csv' | 'layout';

export interface ArtifactsPort {
  /** Stores bytes as an artifact of the current execution (or session); the filename is kept as given. */
  write(artifact: { kind: ArtifactKind; filename: string; mimeType: string; bytes: Buffer }): Promise<ArtifactRef>;
  /** @throws NotFoundError for ids of other organisations or unknown ids. */
  read(objectId: string): Promise<ArtifactRef & { bytes: Buffer }>;
  /** The artifacts of the current execution (or session), oldest first. */
  list(): Promise<ArtifactRef[]>;
}

export interface HubDomainInfo {
  domain: string;
  name: string;
  description: string;
  supportedInputs: string[];
  jsonSchema: JsonSchema;
}

export interface HubPort {
  list(): HubDomainInfo[];
  /** null for an unknown domain. */
  find(domain: string): HubDomainInfo | null;
}

/** A skill loaded into the current run. */
export interface LoadedSkillInfo {
  id: string;
  name: string;
  version: string;
  description: string;
  files: { path: string; sizeBytes: number }[];
}

export interface SkillsPort {
  /** Skills enabled for this run (empty outside a run that names skills). */
  list(): LoadedSkillInfo[];
  /** @throws NotFoundError when the skill is not loaded or the path is not in its bundle. */
  readFile(skill: string, path: string): Promise<Buffer>;
}

export interface FetchedPage {
  status: number;
  finalUrl: string;
  mimeType: string;
  body: Buffer;
}

export interface FetchPort {
  /** GETs a public http(s) URL; private, loopback and link-local addresses are refused (`url_not_allowed`). */
  fetch(url: string): Promise<FetchedPage>;
}

/** One remembered note, as recall finds it. */
export interface Memory {
  key: string;
  value: Record<string, unknown>;
  /** Cosine similarity to the query (higher is closer). */
  score: number;
  updatedAt: string;
}

/**
 * Long-term memory: notes kept in the organisation's LangGraph store (docs/langgraph.md) under `namespace`, found
 * again by meaning with Prism's own embedding engine. A LangGraph client reads and edits the same items.
 */
export interface MemoryPort {
  namespace: string[];
  /** Stores (or replaces) the note under `key`. */
  remember(key: string, value: Record<string, unknown>): Promise<void>;
  /** The closest notes to `query`, best first. */
  recall(query: string, limit: number): Promise<Memory[]>;
}

/** Progress a long tool reports (MCP turns it into progress notifications; the loop logs it). */
export interface ToolProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** Everything a tool handler may touch. Built per call by the composition root (see `container.agents`). */
export interface ToolContext {
  principal: Principal;
  /** Aborted when the execution is cancelled, misses its deadline, or the MCP client goes away. */
  signal: CancelSignal;
  progress?: (update: ToolProgress) => void;
  executionId: string | null;
  sessionId: string | null;
  media: MediaPort;
  vision: VisionPort;
  artifacts: ArtifactsPort;
  hub: HubPort;
  skills: SkillsPort;
  fetch: FetchPort;
  memory: MemoryPort;
}

// ---------------------------------------------------------------------------------------------------------------
// Tools

/** MCP tool annotations (hints for clients; they do not change behaviour). */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** One tool: snake_case `name` equal to its function name, a description written for a model, zod schemas. */
export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  inputSchema: I;
  outputSchema: O;
  annotations: ToolAnnotations;
  /**
   * The tool acts on the world in a way a person should approve first (sends, deletes, pays): a run that allows
   * pauses stops before each call of it until someone approves, rejects or edits the call. A run that cannot pause
   * (a generate request, an evaluation rerun) gets an error for such a call instead of running it unasked.
   */
  needsApproval?: boolean;
  /**
   * The arguments' JSON schema as planners see it, when `inputSchema` cannot say it (a remote MCP server's tool:
   * its schema is the server's JSON schema, checked by the bounded checker inside `inputSchema`).
   */
  parameters?: Record<string, unknown>;
  /** Receives input already parsed by `inputSchema`; its result is checked against `outputSchema`. */
  handler(input: z.output<I>, ctx: ToolContext): Promise<z.input<O>>;
}

/** A tool whose schemas are erased, as registries and adapters hold it. */
export type AnyToolDefinition = ToolDefinition<z.ZodObject, z.ZodObject>;

/** The error a handler throws for arguments that parse but cannot be used (400 `invalid_tool_input`). */
export function invalidToolInput(tool: string, message: string): Error {
  return new BadRequestError(`Invalid arguments for tool '${tool}': ${message}`, 'invalid_tool_input', tool);
}

const TOOL_NAME = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;

/** Declares a tool; the name must be snake_case (it is the function name a model calls). */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(
  definition: ToolDefinition<I, O>,
): ToolDefinition<I, O> {
  if (!TOOL_NAME.test(definition.name)) throw new Error(`Tool name '${definition.name}' is not snake_case`);
  if (definition.description.trim().length < 20) throw new Error(`Tool '${definition.name}' needs a description`);
  return definition;
}

// ---------------------------------------------------------------------------------------------------------------
// Planner

/** A tool as a planner sees it: name, description and the JSON schema of its arguments. */
export interface PlannerToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
}

export interface PlannerToolCall {
  id: string;
  name: string;
  /** Parsed JSON arguments. */
  arguments: Record<string, unknown>;
}

/** The transcript the loop keeps (plain JSON so checkpoints stay small and portable). */
export type PlannerMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls: PlannerToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string };

/** What one planning step cost. */
export interface PlannerUsage {
  inputTokens: number;
  outputTokens: number;
  /** USD micro-dollars at the standard (1×) rate. */
  costMicros: number;
}

/** One named input of the task, as planners see it (media by source id or URL, never bytes). */
export type PlannerInput =
  | { slot: string; kind: 'media'; family: MediaFamily | 'unknown'; source: string }
  | { slot: string; kind: 'text'; text: string }
  | { slot: string; kind: 'json'; value: unknown };

/** The task in structured form (the transcript carries the same in words, for language models). */
export interface PlannerTask {
  prompt: string | null;
  inputs: PlannerInput[];
  responseSchema: JsonSchema | null;
  /** Skill-graph states in order, empty without a graph. */
  goals: string[];
  /**
   * Set when the task is a chat turn: the conversation before the user's current message (which is `prompt`),
   * oldest first. Language-model planners reply to the user in words; the deterministic planner ignores it.
   */
  chat?: { history: ChatTurn[] };
  /**
   * Set by the generate endpoints (a prediction run through the runtime): the hub domain and the skills'
   * instructions the extraction engine would have used, so a schema filled here is filled the same way.
   */
  extraction?: { domain: string | null; instructions: string | null };
}

/** One earlier message of a chat, as the planner reads it (attachments are named by their input slots). */
export interface ChatTurn {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** What the loop hands a planner for one step. */
export interface PlanRequest {
  task: PlannerTask;
  messages: PlannerMessage[];
  tools: PlannerToolSpec[];
  /** The response schema the final answer must satisfy, if any. */
  responseSchema: JsonSchema | null;
  /** The current sub-goal when a skill graph is followed (a state name), else null. */
  goal: string | null;
  signal: CancelSignal;
  /**
   * Set when this round's text may be shown to the user as it is written (a chat reply that is not JSON): a
   * language-model planner streams its upstream call and passes each content delta here, in order, until the first
   * tool-call delta, and (if the round ends without tool calls after all) the rest of its content, so for a round
   * that calls no tools the deltas join to exactly `PlanStep.content`. A planner that answers whole ignores it.
   */
  onText?: (delta: string) => void;
}

/** One planning decision: call these tools, or answer with `content` (JSON text when a schema was asked). */
export interface PlanStep {
  content: string | null;
  toolCalls: PlannerToolCall[];
  usage: PlannerUsage;
}

/**
 * Thrown by a planner that cannot do the task (e.g. the deterministic planner asked for language understanding);
 * the execution fails with this message, which names what to configure.
 */
export class PlannerRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PlannerRefusal';
  }
}

/** The port the loop plans with; bound by the composition root to an upstream chat model or the deterministic one. */
export interface PlannerModel {
  /** `language-model` for an upstream chat model; `deterministic` for the rule-based planner. */
  readonly kind: 'language-model' | 'deterministic';
  /** The model id that served (for usage and logs). */
  readonly servedBy: string;
  plan(request: PlanRequest): Promise<PlanStep>;
}

// ---------------------------------------------------------------------------------------------------------------
// Graphs: the port between the runtime and the graphs it runs. The graphs live in `agent-graphs/` (one `*.graph.ts`
// each, listed in `agent-graphs/index.ts` the way `tools/index.ts` lists tools); the composition root hands that list
// to the runtime, so `src/agents` never imports `agent-graphs/`.
// ---------------------------------------------------------------------------------------------------------------

/**
 * One entry of a run's trace, a planner turn or a tool call: an execution step (domain) before it has its place in
 * the execution's step list, with what the turn cost.
 */
export type LoopTraceEntry = Omit<ExecutionStep, 'index'> & { costMicros: number };

export interface ToolRunResult {
  output: Record<string, unknown> | null;
  error: string | null;
}

export interface AgentLoopDeps {
  planner: PlannerModel;
  tools: PlannerToolSpec[];
  runTool(call: PlannerToolCall, goal: string | null): Promise<ToolRunResult>;
  maxSteps: number;
  signal: CancelSignal;
  checkpointer: BaseCheckpointSaver;
  /**
   * Checks a final answer; a problem (e.g. it does not match the response schema) goes back to the planner as a
   * user message while steps remain. Omitted for planners that would only repeat themselves.
   */
  checkFinal?(content: string | null): string | null;
  /** Called after each node with the entries it added (progress saving, logs). */
  onTrace?(entries: LoopTraceEntry[]): void;
  /**
   * Set when the answer is streamed (the runtime's reply gate): opened for each planner round whose answer, if it
   * calls no tools, ends the run (no sub-goal after the current one); the round's content deltas go to `onText`,
   * then `end` says whether it called tools.
   */
  replyRound?(): { onText(delta: string): void; end(calledTools: boolean): void };
  /**
   * Set when the run may pause: whether this call waits for a person's approval before it runs. The loop then
   * interrupts (checkpointed) with a `tool_approval` pause and runs, skips or edits the call on the decision.
   */
  needsApproval?(call: PlannerToolCall): boolean;
  /** Set when the run may pause: the question a skill-graph state asks before it is worked on, or null. */
  questionFor?(goal: string): string | null;
}

/** Thrown by the loop when the planner used its step budget without answering. */
export class StepLimitError extends Error {
  constructor(readonly limit: number) {
    super(`The agent stopped after ${limit} planning steps without an answer (step limit).`);
    this.name = 'StepLimitError';
  }
}

/**
 * Why a run stopped to wait for a person: a tool call that needs approval (with the arguments the planner chose), or
 * a skill-graph state that asks a question. Plain JSON: it is the value of LangGraph's `interrupt()` in the checkpoint.
 */
export type RunPause =
  | { kind: 'tool_approval'; toolCall: PlannerToolCall; goal: string | null }
  | { kind: 'question'; question: string; goal: string | null };

/**
 * What a person answered a pause with (LangGraph's `Command({ resume })` value): approve the call as it is, reject
 * it (the planner reads the reason as the tool's error and carries on without it), run it with edited arguments, or
 * answer a question in words.
 */
export type PauseDecision =
  | { action: 'approve' }
  | { action: 'reject'; reason: string }
  | { action: 'edit'; arguments: Record<string, unknown> }
  | { action: 'answer'; text: string };

/** The loop's state, as checkpointed after every step (plain JSON: media travel as ids). */
export interface AgentLoopStateValue {
  task: PlannerTask;
  messages: PlannerMessage[];
  trace: LoopTraceEntry[];
  goalIndex: number;
  planSteps: number;
  final: string | null;
}

/** The run's checkpoint thread, its step budget and its cancel signal. */
export interface AgentLoopRunConfig {
  configurable: { thread_id: string };
  recursionLimit: number;
  signal: AbortSignal;
}

/**
 * A compiled agent loop: run (or resume after a restart, with a null input) one thread, continue a paused one with a
 * person's decision, and read its last checkpoint. A run that pauses returns its state with `pause` set.
 */
export interface AgentLoopGraph {
  invoke(
    input: Pick<AgentLoopStateValue, 'task' | 'messages'> | null,
    config: AgentLoopRunConfig,
  ): Promise<AgentLoopStateValue & { pause: RunPause | null }>;
  /** Continues a thread paused by `interrupt()` with the decision (LangGraph `Command({ resume })`). */
  resume(
    decision: PauseDecision,
    config: AgentLoopRunConfig,
  ): Promise<AgentLoopStateValue & { pause: RunPause | null }>;
  getState(config: { configurable: { thread_id: string } }): Promise<{ values: unknown }>;
}

/** The graphs the runtime runs, by role; `agent-graphs/index.ts` provides the built-in ones. */
export interface AgentGraphs {
  agentLoop(deps: AgentLoopDeps): AgentLoopGraph;
}
