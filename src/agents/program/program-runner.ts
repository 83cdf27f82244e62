/**
 * Runs compiled programs: replay (program-replay.ts, a straight line: each step's arguments resolved from the inputs
 * and earlier outputs, the tool called through the registry, no model) and compile-then-verify (a program is only
 * kept when one replay on the recorded inputs reproduces the agent run's response).
 */
import { runProgramReplay } from './program-replay';
import type { ProgramDefinition } from '../../domain/execution';
import type { PlannerInput, ToolContext } from '../sdk';
import type { ToolRegistry } from '../tool-registry';
import { compileProgram, resolveValue, type CompiledStepInput } from './program-compiler';

export interface ReplayedStep {
  id: string;
  tool: string;
  goal: string | null;
  arguments: Record<string, unknown>;
  output: Record<string, unknown>;
  durationMs: number;
}

export interface ReplayResult {
  response: unknown;
  steps: ReplayedStep[];
}

/** The `inputs.<slot>.source|text` scope a program's references resolve against. */
export function replayInputs(inputs: PlannerInput[]): Record<string, unknown> {
  const scope: Record<string, unknown> = {};
  for (const input of inputs) {
    scope[input.slot] =
      input.kind === 'media' ? { source: input.source } : input.kind === 'text' ? { text: input.text } : {};
  }
  return scope;
}

export async function replayProgram(
  tools: ToolRegistry,
  program: ProgramDefinition,
  inputs: PlannerInput[],
  ctx: ToolContext,
): Promise<ReplayResult> {
  const steps: ReplayedStep[] = [];
  const scopeInputs = replayInputs(inputs);
  const state = await runProgramReplay({
    inputs: scopeInputs,
    steps: program.steps.map((s) => ({
      id: s.id,
      tool: s.tool,
      goal: s.goal,
      args: (scope) => resolveValue(s.args, scope) as Record<string, unknown>,
    })),
    runTool: (call) => tools.invoke(call.name, call.arguments, ctx),
    signal: ctx.signal,
    onStep(step, args, output, ms) {
      steps.push({ id: step.id, tool: step.tool, goal: step.goal, arguments: args, output, durationMs: ms });
    },
  });
  const response = resolveValue(program.response, { inputs: scopeInputs, steps: state.outputs });
  return { response, steps };
}

/**
 * Compiles a run into a program and replays it once on the same inputs; returns the program only when the replay
 * reproduced `response` exactly.
 */
export async function compileAndVerify(
  tools: ToolRegistry,
  inputs: PlannerInput[],
  trace: CompiledStepInput[],
  response: Record<string, unknown>,
  ctx: ToolContext,
): Promise<ProgramDefinition | null> {
  const program = compileProgram(inputs, trace, response);
  try {
    const replay = await replayProgram(tools, program, inputs, ctx);
    return JSON.stringify(replay.response) === JSON.stringify(response) ? program : null;
  } catch {
    return null;
  }
}
