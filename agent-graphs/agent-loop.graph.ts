/**
 * The agent loop as a LangGraph StateGraph: plan → tools → plan … → finish.
 *
 * The `plan` node asks the PlannerModel port for the next step; `tools` runs the calls it chose through the tool
 * registry (via `runTool`, so the same code serves MCP). When a skill declares a graph, its states are the loop's
 * sub-goals in order: a planner answer without tool calls closes the current state and opens the next one, and the
 * last answer is the run's response. When the runtime streams the answer, each round that may be the last one gets
 * a reply round (`replyRound`) its planner writes its text into as it comes. State is plain JSON (media travel as
 * ids), so the SQLite checkpoints the compiled graph writes after every step stay small, and a run interrupted by a
 * restart resumes from the last one.
 *
 * A run that may pause (`needsApproval`, `questionFor`) stops with LangGraph's `interrupt()` before a tool call that
 * needs a person's approval, or before a skill-graph state that asks a question; the checkpoint keeps the pause, and
 * `resume` continues it with the person's decision (`Command({ resume })`). The tools node asks for every decision
 * before it runs any call, so a node re-run on resume never runs a tool twice.
 */
import { Annotation, Command, END, interrupt, START, StateGraph } from '@langchain/langgraph';
import {
  StepLimitError,
  type AgentLoopDeps,
  type AgentLoopGraph,
  type AgentLoopRunConfig,
  type LoopTraceEntry,
  type PauseDecision,
  type PlannerMessage,
  type PlannerTask,
  type PlannerToolCall,
  type RunPause,
} from '../src/agents/sdk';

const append = <T>(left: T[], right: T[]): T[] => (right.length === 0 ? left : left.concat(right));

export const AgentLoopState = Annotation.Root({
  task: Annotation<PlannerTask>(),
  messages: Annotation<PlannerMessage[]>({ reducer: append, default: () => [] }),
  trace: Annotation<LoopTraceEntry[]>({ reducer: append, default: () => [] }),
  goalIndex: Annotation<number>({ reducer: (_, next) => next, default: () => 0 }),
  planSteps: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
  final: Annotation<string | null>({ reducer: (_, next) => next, default: () => null }),
  /** The goal index whose question (a skill-graph pause) was answered, -1 before any. */
  answered: Annotation<number>({ reducer: (_, next) => next, default: () => -1 }),
});
type AgentLoopStateValue = typeof AgentLoopState.State;

export function buildAgentLoopGraph(deps: AgentLoopDeps): AgentLoopGraph {
  const goalOf = (state: AgentLoopStateValue): string | null => state.task.goals[state.goalIndex] ?? null;

  // The plan node routes itself with a Command (tools, plan again, or the end) instead of a conditional edge: one
  // runnable less per superstep, which the overhead benchmark measures.
  const plan = async (state: AgentLoopStateValue): Promise<Command> => {
    const update = await planStep(state);
    const goto = update.final !== undefined && update.final !== null ? END : route(update);
    return new Command({ update, goto });
  };

  const planStep = async (state: AgentLoopStateValue): Promise<Partial<AgentLoopStateValue>> => {
    if (state.planSteps >= deps.maxSteps) throw new StepLimitError(deps.maxSteps);
    const goal = goalOf(state);
    const asked = askBeforeGoal(state, goal);
    if (asked) return { messages: [asked], answered: state.goalIndex };
    const started = performance.now();
    // Only a round under the last sub-goal (or with none) can answer last; earlier states' answers are hand-offs.
    const round = state.goalIndex + 1 >= state.task.goals.length ? deps.replyRound?.() : undefined;
    const step = await deps.planner.plan({
      task: state.task,
      messages: state.messages,
      tools: deps.tools,
      responseSchema: state.task.responseSchema,
      goal,
      signal: deps.signal,
      ...(round ? { onText: (delta: string) => round.onText(delta) } : {}),
    });
    round?.end(step.toolCalls.length > 0);
    const entry: LoopTraceEntry = {
      kind: 'plan',
      goal,
      name: deps.planner.servedBy,
      toolCallId: null,
      arguments: null,
      output: step.toolCalls.length > 0 ? null : { content: step.content },
      error: null,
      durationMs: performance.now() - started,
      inputTokens: step.usage.inputTokens,
      outputTokens: step.usage.outputTokens,
      costMicros: step.usage.costMicros,
    };
    deps.onTrace?.([entry]);
    const assistant: PlannerMessage = { role: 'assistant', content: step.content, toolCalls: step.toolCalls };
    const update = { messages: [assistant], trace: [entry], planSteps: 1 };
    if (step.toolCalls.length > 0) return update;
    const next = state.goalIndex + 1;
    if (next < state.task.goals.length) {
      // This state is done; the next one becomes the planner's sub-goal.
      const handoff: PlannerMessage = {
        role: 'user',
        content: `State '${goal ?? ''}' is done. Now work on state '${state.task.goals[next] ?? ''}'.`,
      };
      return { ...update, messages: [assistant, handoff], goalIndex: next };
    }
    const problem = deps.checkFinal?.(step.content) ?? null;
    if (problem !== null && state.planSteps + 1 < deps.maxSteps) {
      const retry: PlannerMessage = { role: 'user', content: `${problem} Answer again.` };
      return { ...update, messages: [assistant, retry] };
    }
    return { ...update, final: step.content ?? '' };
  };

  /**
   * The person's answer to the question the current state asks before it is worked on (a user message for the
   * planner), or null when the state asks none or it was answered. Pauses the run (interrupt) until it is answered.
   */
  const askBeforeGoal = (state: AgentLoopStateValue, goal: string | null): PlannerMessage | null => {
    if (goal === null || state.answered >= state.goalIndex || !deps.questionFor) return null;
    const question = deps.questionFor(goal);
    if (question === null) return null;
    const decision = interrupt<RunPause, PauseDecision>({ kind: 'question', question, goal });
    const answer =
      decision.action === 'answer'
        ? decision.text
        : decision.action === 'reject'
          ? `No answer (${decision.reason})`
          : 'Go ahead.';
    return { role: 'user', content: `Asked before state '${goal}': ${question}\nThe person answered: ${answer}` };
  };

  /** Each call's decision, asked in order before any call runs (a re-run node on resume gets the same answers). */
  const decide = (calls: PlannerToolCall[], goal: string | null): PauseDecision[] =>
    calls.map((call) =>
      deps.needsApproval?.(call)
        ? interrupt<RunPause, PauseDecision>({ kind: 'tool_approval', toolCall: call, goal })
        : { action: 'approve' },
    );

  const tools = async (state: AgentLoopStateValue): Promise<Partial<AgentLoopStateValue>> => {
    const last = state.messages.at(-1);
    const calls = last?.role === 'assistant' ? last.toolCalls : [];
    const goal = goalOf(state);
    const decisions = decide(calls, goal);
    const messages: PlannerMessage[] = [];
    const trace: LoopTraceEntry[] = [];
    // Calls of one planner turn run in order: later calls may read artifacts earlier ones wrote.
    for (const [i, asked] of calls.entries()) {
      const decision = decisions[i] ?? { action: 'approve' };
      const call = decision.action === 'edit' ? { ...asked, arguments: decision.arguments } : asked;
      const started = performance.now();
      const result =
        decision.action === 'reject' || decision.action === 'answer'
          ? { output: null, error: `A person rejected this call: ${rejection(decision)}` }
          : await deps.runTool(call, goal);
      trace.push({
        kind: 'tool',
        goal,
        name: call.name,
        toolCallId: call.id,
        arguments: call.arguments,
        output: result.output,
        error: result.error,
        durationMs: performance.now() - started,
        inputTokens: 0,
        outputTokens: 0,
        costMicros: 0,
      });
      const content = JSON.stringify(result.error === null ? result.output : { error: result.error });
      messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content });
    }
    deps.onTrace?.(trace);
    return { messages, trace };
  };

  const route = (update: Partial<AgentLoopStateValue>): 'tools' | 'plan' => {
    const last = update.messages?.at(-1);
    return last?.role === 'assistant' && last.toolCalls.length > 0 ? 'tools' : 'plan';
  };

  const compiled = new StateGraph(AgentLoopState)
    .addNode('plan', plan, { ends: ['tools', 'plan', END] })
    .addNode('tools', tools)
    .addEdge(START, 'plan')
    .addEdge('tools', 'plan')
    .compile({ checkpointer: deps.checkpointer });

  const withPause = (state: AgentLoopStateValue & { __interrupt__?: { value?: unknown }[] }) => {
    const { __interrupt__: interrupts, ...values } = state;
    const pause = (interrupts?.[0]?.value as RunPause | undefined) ?? null;
    return { ...values, pause };
  };
  return {
    invoke: async (input, config: AgentLoopRunConfig) => withPause(await compiled.invoke(input, config)),
    resume: async (decision, config) => withPause(await compiled.invoke(new Command({ resume: decision }), config)),
    getState: (config) => compiled.getState(config),
  };
}

/** The reason a planner reads for a call a person did not allow. */
function rejection(decision: PauseDecision): string {
  if (decision.action === 'reject') return decision.reason || 'no reason given';
  return decision.action === 'answer' ? decision.text : 'no reason given';
}
