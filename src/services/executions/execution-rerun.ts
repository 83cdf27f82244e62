/**
 * Re-runs one stored execution with another skill, for the evaluations `rerun`: the same prompt, inputs (stored
 * files, artifacts, URLs), model, tools and toolsets, on the same runtime `/v1/agent/execute` uses, but with the
 * given skill in place of the execution's own skills (its instructions, `prism.yaml` toolsets and graph states, and
 * its schema.json when it has one). Nothing is stored as an execution and nothing is billed: the run has a fresh
 * thread id whose checkpoints are discarded afterwards, what its tools write as artifacts stays in memory
 * (scratch-artifacts.ts), program mode is not used (a new skill version has no compiled program, and compiling one
 * would store it), and the response only feeds the rerun's scores.
 * An execution whose input can no longer be read (file deleted) or whose agent was deleted is refused with an
 * Error whose message names why; the caller lists it as skipped.
 */
import { randomUUID } from 'node:crypto';
import { orgWorkPrincipal, type Principal } from '../../domain/account';
import type { ExecutionInput } from '../../domain/execution';
import type { ParsedSkill } from '../../domain/skill';
import { runForTenant } from '../../lib/work-tenant';
import type { AgentRuntime } from '../../agents/agent-runtime';
import { RunFailure } from '../../agents/agent-runtime';
import type { LoadedMedia, ToolContext } from '../../agents/sdk';
import type { ToolRegistry } from '../../agents/tool-registry';
import { selectRunTools } from '../../agents/toolsets';
import type { AgentStore, ExecutionStore } from '../../stores/types/execution';
import type { ToolContextFactory } from '../tool-context';
import type { PlannerDirectory } from './executions.types';
import { plannerInputs } from './execution-inputs';
import { loopRunSpec, toolsetsOf } from './execution-skills';
import { scratchArtifacts } from './scratch-artifacts';

export interface ExecutionRerunDeps {
  store: Pick<ExecutionStore, 'get'>;
  agents: Pick<AgentStore, 'get'>;
  tools: ToolRegistry;
  runtime: AgentRuntime;
  toolContext: ToolContextFactory;
  planners: PlannerDirectory;
  limits: { maxSteps: number; deadlineMs: number };
}

export interface ExecutionRerun {
  /** The response of the execution's inputs run again with `skill`; throws an Error naming why it cannot be. */
  rerun(orgId: string, executionId: string, skill: ParsedSkill): Promise<Record<string, unknown>>;
  /** Stops the re-runs in progress (a shutdown). */
  cancelAll(): void;
}

const orgPrincipal = (orgId: string): Principal => orgWorkPrincipal(orgId, 'evaluations');

/** Every stored (non-URL) media source of the inputs, with the slot it sits in. */
function storedSources(inputs: Record<string, ExecutionInput>): Array<{ slot: string; source: string }> {
  const out: Array<{ slot: string; source: string }> = [];
  const visit = (slot: string, input: ExecutionInput): void => {
    if (input.kind === 'list') input.items.forEach((item, i) => visit(`${slot}.${i}`, item));
    else if (input.kind === 'media' && !/^https?:/i.test(input.source)) out.push({ slot, source: input.source });
  };
  for (const [slot, input] of Object.entries(inputs)) visit(slot, input);
  return out;
}

export function createExecutionRerun(deps: ExecutionRerunDeps): ExecutionRerun {
  const running = new Set<AbortController>();
  let shuttingDown = false;

  async function rerun(orgId: string, executionId: string, skill: ParsedSkill): Promise<Record<string, unknown>> {
    const execution = await deps.store.get(orgId, executionId);
    if (!execution) throw new Error(`execution ${executionId} no longer exists`);
    if (execution.agentId && !(await deps.agents.get(orgId, execution.agentId))) {
      throw new Error(`the agent '${execution.name}' that ran execution ${executionId} no longer exists`);
    }
    const { request } = execution;
    const principal = orgPrincipal(orgId);
    const runId = randomUUID();
    const skills = [skill];
    const scratch = scratchArtifacts();
    const context = (signal?: ToolContext['signal']): ToolContext =>
      scratch(deps.toolContext.create(principal, { executionId: runId, skills, ...(signal ? { signal } : {}) }));
    const media = context().media;
    // Each stored input is read once up front: a deleted file is named here, and its family is kept for the task.
    const families = new Map<string, LoadedMedia['family']>();
    for (const { slot, source } of storedSources(request.inputs)) {
      try {
        families.set(source, (await media.load(source)).family);
      } catch (error) {
        throw new Error(
          `the input '${slot}' of execution ${executionId} (${source}) can no longer be read: ${(error as Error).message}`,
          { cause: error },
        );
      }
    }
    const inputs = await plannerInputs(
      request.inputs,
      async (source) => families.get(source) ?? (await media.load(source)).family,
    );
    const resolved = deps.planners.resolve(request.model);
    const tools = selectRunTools(deps.tools, request.tools, toolsetsOf(request.toolsets, skills));
    const controller = new AbortController();
    running.add(controller);
    if (shuttingDown) controller.abort();
    try {
      const result = await deps.runtime.run(
        loopRunSpec(skills, deps.limits, {
          executionId: runId,
          task: {
            prompt: request.prompt,
            inputs,
            responseSchema: skill.schema ?? request.jsonSchema,
            goals: skill.config?.graphStates ?? [],
          },
          tools,
          planner: resolved.planner,
          context,
          signal: controller.signal,
          resume: false,
        }),
      );
      return result.response;
    } catch (error) {
      if (error instanceof RunFailure) {
        throw new Error(`the re-run of execution ${executionId} failed: ${error.message}`, { cause: error });
      }
      throw error;
    } finally {
      running.delete(controller);
      await deps.runtime.discard(runId).catch(() => undefined);
    }
  }

  return {
    // The run's tool reads take turns with other organisations' in the shared OCR pool, as an execution's do.
    rerun: (orgId, executionId, skill) => runForTenant(orgId, () => rerun(orgId, executionId, skill)),

    cancelAll() {
      shuttingDown = true;
      for (const controller of running) controller.abort();
    },
  };
}
