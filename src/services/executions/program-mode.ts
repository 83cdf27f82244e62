/**
 * Program mode for executions: look up the verified program of the run's skill version for this input signature
 * and replay it (no model call), checking the response against the schema; or, after a schema-valid agent run,
 * compile its trace into a program, verify it by one replay and store it for the skill version.
 */
import type { ExecutionStep } from '../../domain/execution';
import type { Principal } from '../../domain/account';
import type { ParsedSkill } from '../../domain/skill';
import { checkAgainstSchema } from '../../lib/json-schema';
import { inputSignature } from '../../agents/program/program-compiler';
import { compileAndVerify, replayProgram } from '../../agents/program/program-runner';
import type { PlannerTask, ToolContext } from '../../agents/sdk';
import type { ToolRegistry } from '../../agents/tool-registry';
import type { ProgramStore } from '../../stores/types/execution';
import type { ToolContextFactory } from '../tool-context';

export interface ProgramModeDeps {
  programs: ProgramStore;
  tools: ToolRegistry;
  toolContext: ToolContextFactory;
}

export type ProgramOutcome =
  { ok: true; response: Record<string, unknown>; steps: ExecutionStep[] } | { ok: false; reason: string };

export async function runProgramMode(
  deps: ProgramModeDeps,
  skill: ParsedSkill,
  task: PlannerTask,
  ctx: ToolContext,
): Promise<ProgramOutcome> {
  const stored = await deps.programs.get(skill.record.id, skill.record.skillVersion, inputSignature(task.inputs));
  if (!stored?.verifiedAt) {
    const reason = 'no verified program for this skill version and inputs yet (a schema-valid agent run compiles one)';
    return { ok: false, reason };
  }
  let replay;
  try {
    replay = await replayProgram(deps.tools, stored.program, task.inputs, ctx);
  } catch (error) {
    return { ok: false, reason: `the replay failed: ${(error as Error).message}` };
  }
  const response = replay.response;
  if (!response || typeof response !== 'object' || Array.isArray(response)) {
    return { ok: false, reason: 'the replay did not produce an object' };
  }
  if (task.responseSchema) {
    const check = checkAgainstSchema(task.responseSchema, response);
    if (!check.valid) return { ok: false, reason: `the replay's output fails the schema: ${check.errors.join('; ')}` };
  }
  const steps: ExecutionStep[] = replay.steps.map((s, index) => ({
    index,
    kind: 'tool',
    goal: s.goal,
    name: s.tool,
    toolCallId: s.id,
    arguments: s.arguments,
    output: s.output,
    error: null,
    durationMs: s.durationMs,
    inputTokens: 0,
    outputTokens: 0,
  }));
  return { ok: true, response: response as Record<string, unknown>, steps };
}

/** Compiles a successful run of `skill` and stores the program once a replay on the same inputs reproduces it. */
export async function recordProgram(
  deps: ProgramModeDeps,
  skill: ParsedSkill,
  task: PlannerTask,
  steps: ExecutionStep[],
  response: Record<string, unknown>,
  executionId: string,
  principal: Principal,
): Promise<boolean> {
  const trace = steps
    .filter((s) => s.kind === 'tool' && s.error === null && s.output !== null)
    .map((s) => ({ tool: s.name, arguments: s.arguments ?? {}, output: s.output ?? {}, goal: s.goal }));
  if (trace.length === 0) return false;
  // The verifying replay files its artifacts apart from the execution's own.
  const ctx = deps.toolContext.create(principal, { sessionId: `program-verify-${executionId}`, skills: [skill] });
  const program = await compileAndVerify(deps.tools, task.inputs, trace, response, ctx);
  if (!program) return false;
  const now = new Date();
  await deps.programs.put({
    skillId: skill.record.id,
    skillVersion: skill.record.skillVersion,
    signature: inputSignature(task.inputs),
    program,
    sourceExecutionId: executionId,
    verifiedAt: now,
    createdAt: now,
  });
  return true;
}
