/**
 * The SkillRunner port of the generate endpoints (services/predictions/skill-runner.ts), built on the executions
 * code: a prediction whose skills call for the runtime runs exactly as an execution of those skills would — same
 * planner directory, toolsets from `prism.yaml`, graph states as the loop's sub-goals, program replay for the
 * second-generation agent model, program compilation after a schema-valid run, wallet holds and settlement at the
 * agent model's prices — but its result is the prediction record. The run's input is stored as an artifact of the
 * prediction (tools read media by id) and its steps as `steps.json` beside it, so
 * `GET /v1/artifacts?execution_id=<prediction id>` shows what ran; the prediction usage (five fields, per spec)
 * counts the steps and names them in `message`.
 */
import { orgWorkPrincipal, withKeyOf, type Principal } from '../../domain/account';
import { AppError, BadRequestError } from '../../domain/errors';
import { TIER_MULTIPLIER, type ExecutionStep } from '../../domain/execution';
import type { ArtifactKind } from '../../domain/artifact';
import type { PredictionUsage } from '../../domain/prediction';
import type { ParsedSkill, SkillResolver, StoredSkillRef } from '../../domain/skill';
import type { Logger } from '../../lib/logger';
import { RunFailure, type AgentRuntime } from '../../agents/agent-runtime';
import { DETERMINISTIC_MESSAGE } from '../../agents/planners/deterministic.planner';
import type { PlannerTask, ToolContext } from '../../agents/sdk';
import type { ToolRegistry } from '../../agents/tool-registry';
import { selectRunTools } from '../../agents/toolsets';
import type { ProgramStore } from '../../stores/types/execution';
import type { ArtifactsService } from '../artifacts.service';
import type { SkillRunHold, SkillRunJob, SkillRunner, SkillRunResult } from '../predictions/skill-runner';
import { AGENT_MODEL_ID, SkillRunInterrupted } from '../predictions/skill-runner';
import type { ToolContextFactory } from '../tool-context';
import { DEFAULT_AGENT_MODEL, type PlannerDirectory, type ResolvedPlanner } from './executions.types';
import { loopRunSpec, resolveSkills, toolsetsOf } from './execution-skills';
import {
  elementsOf,
  plannerTokens,
  type ExecutionBilling,
  type ExecutionCost,
  type ExecutionHold,
} from './execution-usage';
import { recordProgram, runProgramMode } from './program-mode';

export interface SkillRunnerDeps {
  runtime: AgentRuntime;
  tools: ToolRegistry;
  toolContext: ToolContextFactory;
  planners: PlannerDirectory;
  programs: ProgramStore;
  billing: ExecutionBilling;
  skills: SkillResolver | null;
  artifacts: Pick<ArtifactsService, 'write' | 'read'>;
  limits: { maxSteps: number; deadlineMs: number };
  logger: Logger;
}

/** Generate requests are billed at the standard tier (the generate body has no service tier). */
const MULTIPLIER = TIER_MULTIPLIER.standard;

const ARTIFACT_KIND: Record<SkillRunJob['input']['family'], ArtifactKind> = {
  image: 'image',
  document: 'document',
  video: 'video',
  audio: 'audio',
};

/** A hold as the predictions service keeps it; the runner settles the execution hold inside. */
interface RunnerHold extends SkillRunHold {
  hold: ExecutionHold;
}

export function createSkillRunner(deps: SkillRunnerDeps): SkillRunner {
  const runs: SkillRuns = { running: new Map(), shuttingDown: false };
  return {
    planner(requestModel, skills) {
      const model = AGENT_MODEL_ID.test(requestModel)
        ? requestModel
        : (skills.find((s) => s.config?.model)?.config?.model ?? DEFAULT_AGENT_MODEL);
      return { model, deterministic: deps.planners.resolve(model).planner.kind === 'deterministic' };
    },

    async persist(principal, predictionId, references, skills) {
      const refs: StoredSkillRef[] = [];
      for (const [i, reference] of references.entries()) {
        const skill = skills[i];
        if (!skill) continue;
        if (reference.kind !== 'inline') {
          // Pinned to the version resolved now, so a job run later (or after a restart) runs the same bundle.
          refs.push({ kind: 'id', id: skill.record.id, version: skill.record.skillVersion });
          continue;
        }
        const stored = await deps.artifacts.write(
          principal,
          { executionId: predictionId },
          { kind: 'document', filename: `${skill.record.name}.zip`, mimeType: 'application/zip', bytes: reference.zip },
        );
        refs.push({
          kind: 'inline',
          artifactId: stored.objectId,
          name: reference.name,
          description: reference.description,
        });
      }
      return refs;
    },

    async reserve(orgId, model, keyId = null) {
      const resolved = deps.planners.resolve(model);
      await deps.billing.authorize(orgId);
      const hold = await deps.billing.reserve(
        orgId,
        { pricing: resolved.pricing, multiplier: MULTIPLIER, maxSteps: deps.limits.maxSteps },
        keyId,
      );
      const runnerHold: RunnerHold = { hold, release: () => hold.release() };
      return runnerHold;
    },

    run: (job, given) => runSkillJob(deps, runs, job, given ? (given as RunnerHold).hold : null),

    cancelAll() {
      runs.shuttingDown = true;
      for (const controller of runs.running.values()) controller.abort();
    },
  };
}

/** The runs in progress: their cancel handles by prediction id, and whether a shutdown is stopping them. */
interface SkillRuns {
  running: Map<string, AbortController>;
  shuttingDown: boolean;
}

const orgPrincipal = (orgId: string): Principal => orgWorkPrincipal(orgId, 'agent-runtime');

/**
 * Runs one prediction's skills on the runtime: the program of the skill when one replays, else the agent loop;
 * settles its hold, files its steps, and answers the response with its usage. A shutdown stops it unbilled.
 */
async function runSkillJob(
  deps: SkillRunnerDeps,
  runs: SkillRuns,
  job: SkillRunJob,
  hold: ExecutionHold | null,
): Promise<SkillRunResult> {
  const principal = withKeyOf(orgPrincipal(job.orgId), hold?.keyId);
  let resolved: ResolvedPlanner;
  let skills: ParsedSkill[];
  try {
    resolved = deps.planners.resolve(job.model);
    skills = await resolveSkills(deps.skills, deps.artifacts, principal, job.skills);
  } catch (error) {
    hold?.release();
    throw error;
  }
  // A job started again after a restart begins anew: a stale checkpoint would mix two runs' transcripts.
  await deps.runtime.discard(job.predictionId).catch(() => undefined);
  let steps: ExecutionStep[] = [];
  const controller = new AbortController();
  runs.running.set(job.predictionId, controller);
  if (runs.shuttingDown) controller.abort();
  try {
    const planned = await planSkillJob(deps, job, principal, resolved, skills, controller.signal);
    steps = planned.steps;
    if (resolved.planner.kind === 'deterministic' && planned.mode === 'agent') {
      planned.notes.push(DETERMINISTIC_MESSAGE);
    }
    await settle(deps, job, resolved, steps, hold);
    const stepsId = await writeSteps(deps, principal, job, steps);
    return {
      response: planned.response,
      usage: usageOf(job, resolved, planned.mode, steps, stepsId, planned.notes),
    };
  } catch (error) {
    // Stopped by a shutdown: nothing is billed or recorded; the job runs again after the restart.
    if (runs.shuttingDown) {
      hold?.release();
      throw new SkillRunInterrupted();
    }
    const trace = error instanceof RunFailure ? error.trace.map((entry, index) => ({ ...entry, index })) : steps;
    await settle(deps, job, resolved, trace, hold).catch((e: unknown) =>
      deps.logger.warn('could not bill a failed prediction run', { error: String(e) }),
    );
    if (trace.length > 0) await writeSteps(deps, principal, job, trace);
    if (error instanceof AppError) throw error;
    if (error instanceof RunFailure) {
      const hint = resolved.planner.kind === 'deterministic' ? ` ${DETERMINISTIC_MESSAGE}` : '';
      throw new BadRequestError(`The skill run failed: ${error.message}${hint}`, null, 'config.skills');
    }
    throw error;
  } finally {
    runs.running.delete(job.predictionId);
    await deps.runtime.discard(job.predictionId).catch(() => undefined);
  }
}

/** The run itself: the input filed as an artifact, the task, then the skill's program or the agent loop. */
async function planSkillJob(
  deps: SkillRunnerDeps,
  job: SkillRunJob,
  principal: Principal,
  resolved: ResolvedPlanner,
  skills: ParsedSkill[],
  signal: AbortSignal,
): Promise<{
  response: Record<string, unknown>;
  steps: ExecutionStep[];
  mode: 'agent' | 'program';
  notes: string[];
}> {
  const stored = await deps.artifacts.write(
    principal,
    { executionId: job.predictionId },
    {
      kind: ARTIFACT_KIND[job.input.family],
      filename: job.input.filename ?? `input-${job.input.family}`,
      mimeType: job.input.mimeType,
      bytes: job.input.bytes,
    },
  );
  const task: PlannerTask = {
    prompt: null,
    inputs: [{ slot: job.input.family, kind: 'media', family: job.input.family, source: stored.objectId }],
    responseSchema: job.schema,
    goals: skills.find((s) => (s.config?.graphStates.length ?? 0) > 0)?.config?.graphStates ?? [],
    extraction: { domain: job.domain, instructions: job.instructions },
  };
  const tools = selectRunTools(deps.tools, null, toolsetsOf(null, skills), { toolsets: 'config.skills' });
  const context = (toolSignal: ToolContext['signal']): ToolContext =>
    deps.toolContext.create(principal, { executionId: job.predictionId, signal: toolSignal, skills });
  const notes: string[] = [];
  const programSkill = skills[0];
  if (resolved.programCapable && programSkill) {
    const replay = await runProgramMode(deps, programSkill, task, context(signal));
    if (replay.ok) {
      notes.push('Replayed the compiled program of the skill; no model was called.');
      return { response: replay.response, steps: replay.steps, mode: 'program', notes };
    }
    notes.push(`Program mode fell back to the agent loop (${replay.reason}).`);
  }
  const result = await deps.runtime.run(
    loopRunSpec(skills, deps.limits, {
      executionId: job.predictionId,
      task,
      tools,
      planner: resolved.planner,
      context,
      signal,
      resume: false,
    }),
  );
  const steps = result.trace.map((entry, index) => ({ ...entry, index }));
  if (result.schemaErrors.length > 0) {
    notes.push(`The response does not fully match the schema: ${result.schemaErrors.join('; ')}.`);
  } else if (resolved.programCapable && programSkill) {
    await recordProgram(deps, programSkill, task, steps, result.response, job.predictionId, principal).catch(
      (error: unknown) => deps.logger.warn('could not compile a program', { error: String(error) }),
    );
  }
  return { response: result.response, steps, mode: 'agent', notes };
}

/** Debits the run (its hold, or directly after a restart): the model tokens it used, completed or not. */
async function settle(
  deps: SkillRunnerDeps,
  job: SkillRunJob,
  resolved: ResolvedPlanner,
  steps: ExecutionStep[],
  hold: ExecutionHold | null,
): Promise<ExecutionCost | null> {
  const { inputTokens, outputTokens } = plannerTokens(steps);
  try {
    if (inputTokens + outputTokens === 0) return null;
    const charge = {
      pricing: resolved.pricing,
      inputTokens,
      outputTokens,
      multiplier: MULTIPLIER,
      reason: `generate ${job.model} ${job.predictionId}`,
    };
    return hold ? await hold.settle(charge) : await deps.billing.charge(job.orgId, charge);
  } finally {
    hold?.release();
  }
}

async function writeSteps(
  deps: SkillRunnerDeps,
  principal: Principal,
  job: SkillRunJob,
  steps: ExecutionStep[],
): Promise<string | null> {
  try {
    const artifact = await deps.artifacts.write(
      principal,
      { executionId: job.predictionId },
      {
        kind: 'json',
        filename: 'steps.json',
        mimeType: 'application/json',
        bytes: Buffer.from(JSON.stringify(steps, null, 2)),
      },
    );
    return artifact.objectId;
  } catch (error) {
    deps.logger.warn('could not store the steps of a prediction run', { error: String(error) });
    return null;
  }
}

/** The prediction usage of a run: elements read by its tools, its steps counted and named in `message`. */
function usageOf(
  job: SkillRunJob,
  resolved: ResolvedPlanner,
  mode: 'agent' | 'program',
  steps: ExecutionStep[],
  stepsArtifact: string | null,
  notes: string[],
): PredictionUsage {
  const elements = elementsOf(steps);
  const named = steps.map((s) => `${s.goal ? `${s.goal}: ` : ''}${s.kind === 'tool' ? s.name : 'plan'}`).join(', ');
  const planner = resolved.planner.kind === 'deterministic' ? 'the deterministic planner' : resolved.planner.servedBy;
  const summary =
    `Ran on the agent runtime (${job.model}, ${planner}, ${mode} mode) in ${steps.length} steps: ${named}.` +
    (stepsArtifact ? ` Steps: artifact ${stepsArtifact}.` : '');
  return {
    ...elements,
    credits_used: elements.elements_processed,
    steps: steps.length,
    message: [summary, ...notes].join(' '),
  };
}
