/**
 * Program replay as a LangGraph StateGraph built from a compiled program: one node per step, in order, no model
 * node. Each step resolves its arguments against the inputs and earlier outputs and calls the tool; a step that
 * fails stops the replay (the caller then falls back to agent mode).
 */
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import type { PlannerToolCall } from '../src/agents/sdk';

export interface ProgramReplayStep {
  id: string;
  tool: string;
  goal: string | null;
  /** Resolves the step's arguments from what the replay has so far (`inputs.*`, `steps.<id>.output.*`). */
  args(scope: Record<string, unknown>): Record<string, unknown>;
}

export interface ProgramReplayDeps {
  steps: ProgramReplayStep[];
  inputs: Record<string, unknown>;
  runTool(call: PlannerToolCall): Promise<Record<string, unknown>>;
  onStep?(step: ProgramReplayStep, args: Record<string, unknown>, output: Record<string, unknown>, ms: number): void;
}

export const ProgramReplayState = Annotation.Root({
  outputs: Annotation<Record<string, { output: Record<string, unknown> }>>({
    reducer: (a, b) => ({ ...a, ...b }),
    default: () => ({}),
  }),
});
export type ProgramReplayStateValue = typeof ProgramReplayState.State;

export function buildProgramReplayGraph(deps: ProgramReplayDeps) {
  // Node names are fixed per position so the graph shape only depends on the step count.
  const graph = new StateGraph(ProgramReplayState) as unknown as StateGraph<
    typeof ProgramReplayState.spec,
    ProgramReplayStateValue,
    Partial<ProgramReplayStateValue>,
    string
  >;
  let previous: string = START;
  for (const step of deps.steps) {
    const node = `step_${step.id}`;
    graph.addNode(node, async (state: ProgramReplayStateValue) => {
      const args = step.args({ inputs: deps.inputs, steps: state.outputs });
      const started = performance.now();
      const output = await deps.runTool({ id: step.id, name: step.tool, arguments: args });
      deps.onStep?.(step, args, output, performance.now() - started);
      return { outputs: { [step.id]: { output } } };
    });
    graph.addEdge(previous, node);
    previous = node;
  }
  graph.addEdge(previous, END);
  return graph.compile();
}
