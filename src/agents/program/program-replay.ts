/**
 * Program replay: the graph of a compiled program is a straight line — one node per step, in order, no model node,
 * no branches — so it runs as exactly that, a loop over the steps. Each step resolves its arguments against the
 * inputs and earlier outputs and calls the tool; a step that fails stops the replay (the caller then falls back to
 * agent mode).
 *
 * It deliberately does not go through a LangGraph StateGraph: a replay is never checkpointed (it is short, has no
 * model call and is simply run again after a restart), and a compiled one-node StateGraph still costs several ms of
 * CPU per invoke (config merging, run trees, channel bookkeeping — measured with `node --cpu-prof`), which is more
 * than the tools of a cheap program cost and would eat the replay's advantage over an agent run (bench `agents`).
 */
import type { CancelSignal, PlannerToolCall } from '../sdk';

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
  /** Checked before each step: a cancelled replay stops. */
  signal?: CancelSignal;
}

export interface ProgramReplayState {
  outputs: Record<string, { output: Record<string, unknown> }>;
}

/** Runs the steps in order and returns every step's output by id. */
export async function runProgramReplay(deps: ProgramReplayDeps): Promise<ProgramReplayState> {
  const outputs: ProgramReplayState['outputs'] = {};
  for (const step of deps.steps) {
    if (deps.signal?.aborted) throw new Error('The replay was cancelled.');
    const args = step.args({ inputs: deps.inputs, steps: outputs });
    const started = performance.now();
    const output = await deps.runTool({ id: step.id, name: step.tool, arguments: args });
    deps.onStep?.(step, args, output, performance.now() - started);
    outputs[step.id] = { output };
  }
  return { outputs };
}
