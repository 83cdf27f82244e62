/**
 * The agent runtime: runs one execution through the LangGraph loop (agent-graphs/agent-loop.graph.ts, handed in as
 * `deps.graphs`) with its planner, tools, step limit, total deadline and cancellation, checkpointed in SQLite under
 * the execution id so a run interrupted by a restart can resume from its last step. It knows ports only: the
 * graphs, the planner, a ToolContext factory and the tool registry; services decide what an execution is and what
 * it costs. A chat turn's answer can be streamed as the planner writes it (`onText`, through the reply gate of
 * reply-stream.ts).
 *
 * A run may pause (`approvals`): before a call of a tool that needs approval, or before a skill-graph state that
 * asks a question, the loop interrupts and `run` returns the pause instead of an answer; the checkpoint keeps it,
 * and a later `run` with `decision` continues from there (`Command({ resume })`).
 */
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { AppError } from '../domain/errors';
import type { CancelSignal } from '../lib/cancel';
import { prepareSchema } from '../lib/json-schema';
import type { Logger } from '../lib/logger';
import { finalAnswer, finalProblem, type FinalAnswer } from './final-answer';
import type { CheckpointDurability } from './checkpoint-durability';
import { createReplyStream } from './reply-stream';
import {
  PlannerRefusal,
  StepLimitError,
  type PauseDecision,
  type RunPause,
  type AgentGraphs,
  type AgentLoopDeps,
  type AgentLoopStateValue,
  type AnyToolDefinition,
  type LoopTraceEntry,
  type PlannerMessage,
  type PlannerModel,
  type PlannerTask,
  type ToolContext,
} from './sdk';
import { markSpanFailed, tracingOn, withSpan } from '../lib/tracing';
import { invokeTool, type ToolRegistry } from './tool-registry';
import { CHAT_SYSTEM_PROMPT, describeTask, SYSTEM_PROMPT, type SkillBrief } from './transcript';
import { installUntracedRunContext } from './untraced-run-context';

export type { SkillBrief };

export interface AgentRuntimeDeps {
  tools: ToolRegistry;
  /** The graphs it runs (`BUILTIN_GRAPHS` of agent-graphs/index.ts), handed in by the composition root. */
  graphs: AgentGraphs;
  checkpointer: BaseCheckpointSaver;
  logger: Logger;
  /**
   * When each step's checkpoint is written (checkpoint-durability.ts chooses it per backend): `sync` before the next
   * step starts, `async` while it runs. Defaults to `sync`.
   */
  durability?: CheckpointDurability;
}

export interface RunSpec {
  executionId: string;
  task: PlannerTask;
  skills: SkillBrief[];
  tools: AnyToolDefinition[];
  planner: PlannerModel;
  /** Builds the tool context for this run, bound to the run's cancel signal. */
  context(signal: CancelSignal): ToolContext;
  maxSteps: number;
  deadlineMs: number;
  /** Cancels the run from outside (shutdown). */
  signal?: CancelSignal;
  /** Continue from the last checkpoint instead of starting over. */
  resume: boolean;
  onTrace?(entries: LoopTraceEntry[]): void;
  /**
   * Streams the answer as the planner writes it: tasks without a response schema only (a JSON answer must pass
   * `checkFinal` first); which text is passed on is reply-stream.ts's rule. Ignored otherwise.
   */
  onText?: (delta: string) => void;
  /**
   * Set when the run may pause for a person: the tools whose calls wait for approval (beside those that declare
   * `needsApproval`), and the questions skill-graph states ask before they are worked on (by state name).
   */
  approvals?: { tools: readonly string[]; questions?: Readonly<Record<string, string>> };
  /** Continues a paused run with a person's decision (implies resuming from the checkpoint). */
  decision?: PauseDecision;
}

export interface RunResult extends FinalAnswer {
  /** Set when the run stopped to wait for a person; the answer fields are then empty. */
  pause: RunPause | null;
  trace: LoopTraceEntry[];
  /** The planner's final text as written (a chat reply is this text, not the JSON object made of it). */
  final: string | null;
  /** The text passed to `onText`, exactly ('' when nothing was streamed): the reply a streamed chat stores. */
  streamed: string;
}

/** A run that ended without an answer; the message is safe to show the caller. */
export class RunFailure extends Error {
  constructor(
    message: string,
    readonly trace: LoopTraceEntry[],
  ) {
    super(message);
    this.name = 'RunFailure';
  }
}

export interface AgentRuntime {
  run(spec: RunSpec): Promise<RunResult>;
  /** Whether a checkpoint exists for the execution (so a restart can resume it). */
  hasCheckpoint(executionId: string): Promise<boolean>;
  /** Drops the execution's checkpoints once it is finished. */
  discard(executionId: string): Promise<void>;
}

export function createAgentRuntime(deps: AgentRuntimeDeps): AgentRuntime {
  // No throwaway LangSmith run tree per runnable while nothing traces (untraced-run-context.ts).
  installUntracedRunContext();
  const threadConfig = (executionId: string) => ({ configurable: { thread_id: executionId } });

  return {
    async run(spec) {
      // A large answer schema (a bundle's schema.json, a resumed job's) compiles on a structure worker, not on the
      // event loop, before the run checks answers against it (lib/json-schema.ts).
      if (spec.task.responseSchema) await prepareSchema(spec.task.responseSchema);
      const controller = new AbortController();
      const timer = setTimeout(
        () => controller.abort(new RunFailure(`The run missed its deadline of ${spec.deadlineMs / 1000} s.`, [])),
        spec.deadlineMs,
      );
      // The caller may stop the run with a reason of its own (a RunFailure, e.g. its spending limit).
      const onOuterAbort = (): void => {
        const reason = spec.signal?.reason;
        controller.abort(reason instanceof RunFailure ? reason : new RunFailure('The run was cancelled.', []));
      };
      spec.signal?.addEventListener('abort', onOuterAbort);
      const ctx = spec.context(controller.signal);
      // Chat turns and streamed executions (their only callers with `onText`) stream an answer that is not JSON.
      const reply = spec.onText && spec.task.responseSchema === null ? createReplyStream(spec.onText) : null;
      const graph = deps.graphs.agentLoop({
        planner: tracingOn() ? tracedPlanner(spec.planner) : spec.planner,
        tools: deps.tools.specs(spec.tools),
        maxSteps: spec.maxSteps,
        signal: controller.signal,
        checkpointer: deps.checkpointer,
        ...(spec.planner.kind === 'language-model'
          ? { checkFinal: (content: string | null) => finalProblem(content, spec.task.responseSchema) }
          : {}),
        onTrace: (entries) => spec.onTrace?.(entries),
        ...(reply ? { replyRound: () => reply.round() } : {}),
        ...(spec.approvals ? pauseHooks(spec.approvals, spec.tools) : {}),
        async runTool(call) {
          const tool = spec.tools.find((t) => t.name === call.name);
          if (!tool) return { output: null, error: `Tool '${call.name}' is not available in this run.` };
          if (tool.needsApproval && !spec.approvals) {
            return { output: null, error: `Tool '${call.name}' needs a person's approval, which this run cannot ask.` };
          }
          const attributes = {
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': call.name,
            'gen_ai.tool.call.id': call.id,
          };
          return withSpan(`execute_tool ${call.name}`, attributes, async (span) => {
            try {
              // A tool of this run only (a remote MCP server's) is not in the registry: it runs by the same rules.
              const output =
                deps.tools.get(call.name) === tool
                  ? await deps.tools.invoke(call.name, call.arguments, ctx)
                  : await invokeTool(tool, call.arguments, ctx);
              return { output, error: null };
            } catch (error) {
              if (controller.signal.aborted) throw error;
              const message = safeMessage(error);
              markSpanFailed(span, message);
              return { output: null, error: message };
            }
          });
        },
      });
      const config = {
        ...threadConfig(spec.executionId),
        // Each plan → tools round is two supersteps; the step limit itself is enforced in the plan node.
        recursionLimit: spec.maxSteps * 2 + 4,
        signal: controller.signal,
        // As the backend chose (checkpoint-durability.ts): on a shared database each step's checkpoint is written
        // before the next step starts, so a replica killed during a planner call resumes after the tool that ran.
        durability: deps.durability ?? 'sync',
      };
      const input = spec.resume ? null : { task: spec.task, messages: initialMessages(spec) };
      let state: (AgentLoopStateValue & { pause: RunPause | null }) | undefined;
      try {
        state = spec.decision ? await graph.resume(spec.decision, config) : await graph.invoke(input, config);
      } catch (error) {
        const snapshot = (await graph.getState(threadConfig(spec.executionId)).catch(() => null))?.values as
          Partial<AgentLoopStateValue> | undefined;
        const trace = snapshot?.trace ?? [];
        const reason = controller.signal.reason as unknown;
        if (reason instanceof RunFailure) throw new RunFailure(reason.message, trace);
        throw new RunFailure(failureMessage(error), trace);
      } finally {
        clearTimeout(timer);
        spec.signal?.removeEventListener('abort', onOuterAbort);
      }
      if (state.pause) {
        // Reading the checkpoint commits the interrupt's pending writes: the pause survives a restart from here on.
        // (A run that paused again at once returns no values of its own: the checkpoint has its trace.)
        const saved = (await graph.getState(threadConfig(spec.executionId))).values as Partial<AgentLoopStateValue>;
        const trace = (state as Partial<AgentLoopStateValue>).trace ?? saved.trace ?? [];
        return { response: {}, schemaErrors: [], parsed: false, pause: state.pause, trace, final: null, streamed: '' };
      }
      const answer = finalAnswer(state.final, spec.task.responseSchema);
      return { ...answer, pause: null, trace: state.trace, final: state.final, streamed: reply?.sent ?? '' };
    },

    async hasCheckpoint(executionId) {
      return (await deps.checkpointer.getTuple(threadConfig(executionId))) !== undefined;
    },

    async discard(executionId) {
      await deps.checkpointer.deleteThread(executionId);
    },
  };
}

/** The loop's pause hooks: which calls wait for approval, which states ask a question first. */
function pauseHooks(
  approvals: NonNullable<RunSpec['approvals']>,
  tools: AnyToolDefinition[],
): Pick<AgentLoopDeps, 'needsApproval' | 'questionFor'> {
  const gated = new Set(approvals.tools);
  for (const tool of tools) if (tool.needsApproval) gated.add(tool.name);
  const questions = approvals.questions ?? {};
  return {
    needsApproval: (call) => gated.has(call.name),
    questionFor: (goal) => (Object.hasOwn(questions, goal) ? (questions[goal] ?? null) : null),
  };
}

function initialMessages(spec: RunSpec): PlannerMessage[] {
  return [
    { role: 'system', content: spec.task.chat ? CHAT_SYSTEM_PROMPT : SYSTEM_PROMPT },
    { role: 'user', content: describeTask(spec.task, spec.skills) },
  ];
}

function failureMessage(error: unknown): string {
  if (error instanceof StepLimitError || error instanceof PlannerRefusal) return error.message;
  if (error instanceof Error && error.name === 'GraphRecursionError') {
    return 'The agent stopped: it exceeded the step limit without an answer.';
  }
  return `The run failed: ${safeMessage(error)}`;
}

/** AppErrors carry caller-safe messages; anything else is summarised without internals. */
function safeMessage(error: unknown): string {
  if (error instanceof AppError) return error.message;
  if (error instanceof PlannerRefusal) return error.message;
  if (error instanceof SyntaxError) return 'a value could not be parsed';
  return error instanceof Error ? error.message.split('\n')[0]?.slice(0, 300) || 'unexpected error' : String(error);
}

/** The planner with a span per step (`agent step`): what it asked for (tool calls) and its tokens and cost. */
function tracedPlanner(planner: PlannerModel): PlannerModel {
  let step = 0;
  return {
    kind: planner.kind,
    servedBy: planner.servedBy,
    plan(request) {
      step += 1;
      return withSpan(
        `agent step ${step}`,
        { 'prism.agent.step': step, 'prism.planner': planner.kind },
        async (span) => {
          const planned = await planner.plan(request);
          span?.setAttributes({
            'gen_ai.usage.input_tokens': planned.usage.inputTokens,
            'gen_ai.usage.output_tokens': planned.usage.outputTokens,
            'prism.tool_calls': planned.toolCalls.map((c) => c.name).join(','),
          });
          return planned;
        },
      );
    },
  };
}
