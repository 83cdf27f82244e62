/**
 * Agent executions: the execute endpoint's one service. It checks and normalises the request (model, schema,
 * tools, skills, inputs), checks the wallet, stores the record, and runs it now or through the job queue
 * (`batch`). A run goes through program mode (second-generation model, `mode: program`, a verified program for the
 * skill version) or the agent runtime's LangGraph loop; the record ends `completed` or `failed` with usage and cost
 * (debited from the wallet), the callback is signed and sent, and a schema-valid skill run of the
 * second-generation model is compiled into a program. A restart resumes runs from their checkpoints or fails them
 * with a message; none is left `running`.
 */
import { randomUUID } from 'node:crypto';
import { orgWorkPrincipal, type Principal } from '../../domain/account';
import { AppError, BadRequestError, NotFoundError } from '../../domain/errors';
import {
  emptyExecutionUsage,
  type Execution,
  type ExecutionMode,
  type ExecutionRequest,
  type ExecutionStep,
  type ServiceTier,
} from '../../domain/execution';
import { isTerminal } from '../../domain/prediction';
import type { ParsedSkill, SkillResolver } from '../../domain/skill';
import { compileSchema } from '../../lib/json-schema';
import { parsePublicUrl, SafeFetchError } from '../../lib/safe-fetch';
import type { Logger } from '../../lib/logger';
import { runForTenant } from '../../lib/work-tenant';
import type { AgentRuntime } from '../../agents/agent-runtime';
import { RunFailure } from '../../agents/agent-runtime';
import type { PlannerModel, PlannerTask, ToolContext } from '../../agents/sdk';
import type { ToolRegistry } from '../../agents/tool-registry';
import { checkToolsets, selectRunTools } from '../../agents/toolsets';
import { CONFIGURE_HINT, DETERMINISTIC_MESSAGE } from '../../agents/planners/deterministic.planner';
import type { AgentStore, ExecutionStore, ProgramStore } from '../../stores/execution-store';
import type { ArtifactsService } from '../artifacts.service';
import type { FilesService } from '../files.service';
import type { ToolContextFactory } from '../tool-context';
import { normaliseInputs, plannerInputs } from './execution-inputs';
import { loopRunSpec, resolveSkills, skillRefsOf, type SkillEntryWire } from './execution-skills';
import {
  buildUsage,
  plannerTokens,
  type ExecutionBilling,
  type ExecutionHold,
  type PlannerPricing,
} from './execution-usage';
import { runProgramMode, recordProgram } from './program-mode';

/** A resumed run that keeps dying is given up after this many starts. */
const MAX_ATTEMPTS = 3;

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
  skills: SkillResolver | null;
  files: Pick<FilesService, 'get'>;
  artifacts: Pick<ArtifactsService, 'write' | 'read'>;
  orgIdFor(principal: Principal): Promise<string>;
  enqueue(id: string): void;
  onFinished(execution: Execution): void;
  limits: { maxSteps: number; deadlineMs: number };
  logger: Logger;
}

/** How a caller that waits for a run (MCP's execute_agent) follows and stops it. */
export interface ExecuteOptions {
  /** Aborting it cancels the run: it ends `failed` with a message saying so. Ignored for `batch` runs. */
  signal?: AbortSignal;
  /** Called once per recorded step (plan or tool) while the run goes on, with the steps so far. */
  onStep?(step: ExecutionStep, stepsSoFar: number): void;
}

export interface ExecutionsService {
  execute(principal: Principal, command: ExecuteCommand, options?: ExecuteOptions): Promise<Execution>;
  list(principal: Principal, page: { skip: number; limit: number }): Promise<Execution[]>;
  /** @throws NotFoundError (`execution_not_found`) also for other organisations' executions. */
  get(principal: Principal, id: string): Promise<Execution>;
  /** Runs a queued execution (the job queue's handler). */
  runJob(id: string): Promise<void>;
  /** After a restart: resumes interrupted runs from their checkpoints or fails them with a message. */
  resumeUnfinished(): Promise<{ resumed: number; failed: number }>;
  /** Stops running executions for a shutdown; they stay `running` and resume after the restart. */
  cancelAll(): void;
}

export const DEFAULT_AGENT_MODEL = 'prism-orion-1:auto';

export function createExecutionsService(deps: ExecutionsServiceDeps): ExecutionsService {
  const { store, logger } = deps;
  const running = new Map<string, AbortController>();
  /** Wallet holds of accepted runs, by execution id, from `execute` until the run settles (a restart forgets them). */
  const holds = new Map<string, ExecutionHold>();
  let shuttingDown = false;

  /** Gives an execution's hold back, if it still has one (the run ended without a bill, or was stopped). */
  const releaseHold = (id: string): void => {
    holds.get(id)?.release();
    holds.delete(id);
  };

  const orgPrincipal = (orgId: string): Principal => orgWorkPrincipal(orgId, 'agent-runtime');

  async function buildTask(
    execution: Execution,
    principal: Principal,
  ): Promise<{ task: PlannerTask; skills: ParsedSkill[] }> {
    const { request } = execution;
    const skills = await resolveSkills(deps.skills, deps.artifacts, principal, request.skills);
    const ctx = deps.toolContext.create(principal, { executionId: execution.id });
    const inputs = await plannerInputs(request.inputs, async (source) => (await ctx.media.load(source)).family);
    const skillSchema = skills.find((s) => s.schema)?.schema ?? null;
    const goals = skills.find((s) => (s.config?.graphStates.length ?? 0) > 0)?.config?.graphStates ?? [];
    return {
      task: { prompt: request.prompt, inputs, responseSchema: request.jsonSchema ?? skillSchema, goals },
      skills,
    };
  }

  async function finish(
    execution: Execution,
    outcome: {
      status: 'completed' | 'failed';
      response: Record<string, unknown> | null;
      steps: ExecutionStep[];
      mode: ExecutionMode;
      message: string | null;
      startedAt: number;
      resolved: ResolvedPlanner;
    },
  ): Promise<Execution | null> {
    const { inputTokens: tokensIn, outputTokens: tokensOut } = plannerTokens(outcome.steps);
    // A run is billed for the model tokens it used, completed or not; one that used none costs nothing.
    const bill = tokensIn + tokensOut > 0;
    const tier = execution.request.serviceTier;
    const charge = {
      pricing: outcome.resolved.pricing,
      inputTokens: tokensIn,
      outputTokens: tokensOut,
      multiplier: emptyExecutionUsage(tier).mode_multiplier,
      reason: `agent.execute ${execution.model} ${execution.id}`,
    };
    // The hold taken at acceptance is settled; a run resumed after a restart has none and is debited directly.
    const hold = holds.get(execution.id);
    holds.delete(execution.id);
    let cost: Awaited<ReturnType<ExecutionBilling['charge']>> | null = null;
    try {
      if (bill) cost = hold ? await hold.settle(charge) : await deps.billing.charge(execution.orgId, charge);
    } finally {
      hold?.release();
    }
    const usage = buildUsage({
      steps: outcome.steps,
      tier,
      durationMs: Date.now() - outcome.startedAt,
      message: outcome.message,
      cost,
    });
    const done = await store.transition(execution.id, ['running'], outcome.status, {
      response: outcome.response,
      usage,
      steps: outcome.steps,
      executionMode: outcome.mode,
      errorMessage: outcome.status === 'failed' ? outcome.message : null,
      completedAt: new Date(),
    });
    await deps.runtime.discard(execution.id).catch(() => undefined);
    if (done && outcome.steps.length > 0) await writeSteps(done, outcome.steps);
    if (done) deps.onFinished(done);
    return done;
  }

  /**
   * The run's steps as the `steps.json` artifact of the execution (each step's state, tool, arguments, output and
   * tokens), as a generate-with-skills prediction files them; `GET /v1/artifacts?execution_id=` lists it.
   */
  async function writeSteps(execution: Execution, steps: ExecutionStep[]): Promise<void> {
    try {
      await deps.artifacts.write(
        orgPrincipal(execution.orgId),
        { executionId: execution.id },
        {
          kind: 'json',
          filename: 'steps.json',
          mimeType: 'application/json',
          bytes: Buffer.from(JSON.stringify(steps, null, 2)),
        },
      );
    } catch (error) {
      logger.warn('could not store the steps of an execution', { execution: execution.id, error: String(error) });
    }
  }

  async function run(execution: Execution, resume: boolean, follow: ExecuteOptions = {}): Promise<Execution | null> {
    const startedAt = Date.now();
    const principal = orgPrincipal(execution.orgId);
    let resolved: ResolvedPlanner;
    try {
      resolved = deps.planners.resolve(execution.request.model);
    } catch (error) {
      return failEarly(execution, error);
    }
    const controller = new AbortController();
    running.set(execution.id, controller);
    const onCancel = (): void => controller.abort();
    if (follow.signal?.aborted) controller.abort();
    follow.signal?.addEventListener('abort', onCancel, { once: true });
    const stepLog: ExecutionStep[] = resume ? [...execution.steps] : [];
    try {
      const { task, skills } = await buildTask(execution, principal);
      // The runtime listens for aborts from its start on; one that came while the task was built stops it here.
      if (controller.signal.aborted) throw new RunFailure('The run was cancelled.', []);
      const tools = selectRunTools(deps.tools, execution.request.tools, toolsetsOf(execution.request.toolsets, skills));
      const context = (signal: ToolContext['signal']): ToolContext =>
        deps.toolContext.create(principal, { executionId: execution.id, signal, skills });

      const programSkill = skills[0];
      /** Why a run that asked for program mode runs the agent loop instead (said in `usage.message`). */
      let programNote: string | null = null;
      if (execution.request.mode === 'program' && !resume) {
        if (!resolved.programCapable) {
          programNote = `program mode runs only on prism-orion-2 (this run's model is ${execution.request.model})`;
        } else if (!programSkill) {
          programNote = 'the request names no skill (programs are compiled per skill version)';
        }
      }
      if (resolved.programCapable && execution.request.mode === 'program' && programSkill && !resume) {
        const replay = await runProgramMode(deps, programSkill, task, context(controller.signal));
        if (replay.ok) {
          return await finish(execution, {
            status: 'completed',
            response: replay.response,
            steps: replay.steps,
            mode: 'program',
            message: 'Replayed the compiled program of the skill; no model was called.',
            startedAt,
            resolved,
          });
        }
        logger.info('program mode fell back to agent mode', { execution: execution.id, reason: replay.reason });
        programNote = replay.reason;
      }

      const result = await deps.runtime.run(
        loopRunSpec(skills, deps.limits, {
          executionId: execution.id,
          task,
          tools,
          planner: resolved.planner,
          context,
          signal: controller.signal,
          resume,
          onTrace(entries) {
            for (const entry of entries) {
              const step = { ...entry, index: stepLog.length };
              stepLog.push(step);
              follow.onStep?.(step, stepLog.length);
            }
            stopAtSpendingLimit(execution.id, stepLog, controller);
            void store
              .saveProgress(execution.id, { steps: stepLog })
              .catch((error: unknown) => logger.warn('could not save execution progress', { error: String(error) }));
          },
        }),
      );
      const steps = result.trace.map((entry, index) => ({ ...entry, index }));
      const notes: string[] = [];
      if (programNote) notes.push(`Program mode did not engage: ${programNote}; the agent loop ran instead.`);
      if (resolved.planner.kind === 'deterministic') notes.push(DETERMINISTIC_MESSAGE);
      if (result.schemaErrors.length > 0) {
        notes.push(`The response does not fully match the schema: ${result.schemaErrors.join('; ')}.`);
      }
      if (resolved.programCapable && programSkill && result.schemaErrors.length === 0) {
        await recordProgram(deps, programSkill, task, steps, result.response, execution.id, principal).catch(
          (error: unknown) => logger.warn('could not compile a program', { error: String(error) }),
        );
      }
      return await finish(execution, {
        status: 'completed',
        response: result.response,
        steps,
        mode: 'agent',
        message: notes.join(' ') || null,
        startedAt,
        resolved,
      });
    } catch (error) {
      // Stopped by a shutdown: the record stays `running` and its checkpoint lets the next start resume it.
      if (shuttingDown) return null;
      // The checkpoint's trace can lag the steps already reported (a run stopped inside a step): keep the longer.
      const checkpointed = error instanceof RunFailure ? error.trace.map((entry, index) => ({ ...entry, index })) : [];
      const trace = checkpointed.length >= stepLog.length ? checkpointed : stepLog;
      const message = messageOf(error);
      if (!(error instanceof RunFailure || error instanceof AppError)) {
        logger.error('execution failed unexpectedly', { execution: execution.id, error: String(error) });
      }
      return finish(execution, {
        status: 'failed',
        response: null,
        steps: trace,
        mode: 'agent',
        message: resolved.planner.kind === 'deterministic' ? withPlannerNote(message) : message,
        startedAt,
        resolved,
      });
    } finally {
      follow.signal?.removeEventListener('abort', onCancel);
      running.delete(execution.id);
      releaseHold(execution.id);
    }
  }

  /**
   * A run's hold is its ceiling: once the planner tokens used so far cost more than was held at acceptance, the
   * run stops (failed, billed the amount held) instead of spending money the wallet was never asked for.
   */
  function stopAtSpendingLimit(id: string, steps: ExecutionStep[], controller: AbortController): void {
    const hold = holds.get(id);
    if (!hold || controller.signal.aborted) return;
    const { inputTokens, outputTokens } = plannerTokens(steps);
    if (hold.covers(inputTokens, outputTokens)) return;
    controller.abort(
      new RunFailure(
        `The run reached its spending limit: its planner used more than the $${hold.dollars.toFixed(4)} held for ` +
          'it when it was accepted (PRISM_AGENT_MAX_STEPS steps of 8,192 prompt and 1,024 completion tokens at the ' +
          "planner's prices), and it is billed that amount.",
        [],
      ),
    );
  }

  async function failEarly(execution: Execution, error: unknown): Promise<Execution | null> {
    releaseHold(execution.id);
    const message = messageOf(error);
    const done = await store.transition(execution.id, ['running'], 'failed', {
      usage: { ...emptyExecutionUsage(execution.request.serviceTier), message },
      errorMessage: message,
      completedAt: new Date(),
    });
    if (done) deps.onFinished(done);
    return done;
  }

  async function start(id: string, resume: boolean, follow?: ExecuteOptions): Promise<Execution | null> {
    const execution = await store.getById(id);
    if (!execution || isTerminal(execution.status)) {
      releaseHold(id);
      return execution;
    }
    const claimed = await store.transition(id, ['pending', 'enqueued'], 'running', {
      attempts: execution.attempts + 1,
    });
    if (!claimed) {
      releaseHold(id);
      return store.getById(id);
    }
    const resumed = resume && (await deps.runtime.hasCheckpoint(id));
    // The run's tool reads take turns with other organisations' in the shared OCR pool.
    return runForTenant(claimed.orgId, () => run(claimed, resumed, follow));
  }

  const resumable = new Set<string>();

  return {
    async execute(principal, command, options = {}) {
      if (command.callbackUrl !== null) {
        try {
          parsePublicUrl(command.callbackUrl);
        } catch (error) {
          const reason = error instanceof SafeFetchError ? error.message : 'invalid URL';
          throw new BadRequestError(`callback_url refused: ${reason}.`, 'url_not_allowed', 'callback_url');
        }
      }
      const orgId = await deps.orgIdFor(principal);
      const id = randomUUID();
      let agentId: string | null = null;
      let config = command;
      let name = command.name ?? '';
      if (command.name) {
        const [agentName = '', version = null] = command.name.split(':');
        const agent = await deps.agents.findByName(orgId, agentName, version || null);
        if (!agent) throw new NotFoundError('agent', command.name);
        agentId = agent.id;
        name = `${agent.name}:${agent.version}`;
        config = {
          ...command,
          prompt: command.prompt ?? agent.config.prompt,
          jsonSchema: command.jsonSchema ?? agent.config.jsonSchema,
          tools: command.tools ?? agent.config.tools,
          toolsets: command.toolsets ?? agent.config.toolsets,
          model: command.model ?? agent.config.model,
          mode: command.mode ?? agent.config.mode,
        };
      }
      if (config.jsonSchema) {
        try {
          compileSchema(config.jsonSchema);
        } catch (error) {
          throw new BadRequestError(
            `config.json_schema is not a usable JSON schema: ${(error as Error).message}`,
            'schema_invalid',
            'config.json_schema',
          );
        }
      }
      selectRunTools(deps.tools, config.tools, config.toolsets);
      const agentSkills =
        agentId && command.skills.length === 0
          ? ((await deps.agents.get(orgId, agentId))?.config.skills ?? [])
          : await skillRefsOf(deps.artifacts, principal, id, command.skills);
      const skills = await resolveSkills(deps.skills, deps.artifacts, principal, agentSkills);
      for (const skill of skills) checkToolsets(skill.config?.toolsets, 'config.skills');
      const model = config.model ?? skills.find((s) => s.config?.model)?.config?.model ?? DEFAULT_AGENT_MODEL;
      const planner = deps.planners.resolve(model);
      await deps.billing.authorize(orgId);
      const request: ExecutionRequest = {
        model,
        prompt: config.prompt,
        jsonSchema: config.jsonSchema,
        skills: agentSkills,
        tools: config.tools,
        toolsets: config.toolsets,
        serviceTier: config.serviceTier,
        mode: config.mode ?? 'agent',
        inputs: await normaliseInputs(deps, principal, id, command.inputs),
        metadata: command.metadata,
        batch: command.batch,
        clientId: command.clientId,
        clientCreatedAt: command.clientCreatedAt,
      };
      // The run's budget is held before it is stored or run, as a gateway call's is: concurrent runs at a small
      // wallet get 402 once the holds fill it, and the balance never goes below zero.
      holds.set(
        id,
        await deps.billing.reserve(orgId, {
          pricing: planner.pricing,
          multiplier: emptyExecutionUsage(config.serviceTier).mode_multiplier,
          maxSteps: deps.limits.maxSteps,
        }),
      );
      const inserted = store.insert({
        id,
        orgId,
        agentId,
        name: name || (config.prompt ?? '').slice(0, 80),
        model,
        status: command.batch ? 'enqueued' : 'pending',
        executionMode: 'agent',
        request,
        response: null,
        usage: emptyExecutionUsage(config.serviceTier),
        steps: [],
        errorMessage: null,
        callbackUrl: command.callbackUrl,
        sessionId: typeof command.metadata.session_id === 'string' ? command.metadata.session_id : null,
        attempts: 0,
        createdAt: new Date(),
        completedAt: null,
      });
      inserted.catch(() => releaseHold(id));
      const execution = await inserted;
      if (command.batch) {
        deps.enqueue(execution.id);
        return execution;
      }
      return (await start(execution.id, false, options)) ?? execution;
    },

    async list(principal, page) {
      return store.list(await deps.orgIdFor(principal), page);
    },

    async get(principal, id) {
      const found = await store.get(await deps.orgIdFor(principal), id);
      if (!found) throw new NotFoundError('execution', id);
      return found;
    },

    async runJob(id) {
      const resume = resumable.delete(id);
      await start(id, resume);
    },

    async resumeUnfinished() {
      let resumed = 0;
      let failed = 0;
      for (const execution of await store.unfinished()) {
        if (execution.attempts >= MAX_ATTEMPTS) {
          const message = `The run was interrupted by restarts ${execution.attempts} times and was given up.`;
          const done = await store.transition(execution.id, ['pending', 'enqueued', 'running'], 'failed', {
            usage: { ...execution.usage, message },
            errorMessage: message,
            completedAt: new Date(),
          });
          await deps.runtime.discard(execution.id).catch(() => undefined);
          if (done) deps.onFinished(done);
          failed += 1;
          continue;
        }
        if (execution.status === 'running') {
          if (!(await deps.runtime.hasCheckpoint(execution.id))) {
            const message = 'The run was interrupted by a restart before its first step was saved; send it again.';
            const done = await store.transition(execution.id, ['running'], 'failed', {
              usage: { ...execution.usage, message },
              errorMessage: message,
              completedAt: new Date(),
            });
            if (done) deps.onFinished(done);
            failed += 1;
            continue;
          }
          resumable.add(execution.id);
          await store.transition(execution.id, ['running'], 'enqueued');
        } else if (execution.status === 'pending') {
          await store.transition(execution.id, ['pending'], 'enqueued');
        }
        deps.enqueue(execution.id);
        resumed += 1;
      }
      return { resumed, failed };
    },

    cancelAll() {
      shuttingDown = true;
      for (const controller of running.values()) controller.abort();
    },
  };
}

/** The request's toolsets, else those the run's skills declare in prism.yaml, else none (every tool). */
export function toolsetsOf(requested: string[] | null, skills: ParsedSkill[]): string[] | null {
  if (requested && requested.length > 0) return requested;
  const declared = [...new Set(skills.flatMap((s) => s.config?.toolsets ?? []))];
  return declared.length > 0 ? declared : null;
}

/**
 * A deterministic run's failure with the note on what planned it, said once: a planner refusal already says it
 * needs a language model and names the setting to configure, so the note is not added to it again.
 */
export function withPlannerNote(message: string): string {
  if (!message.includes(CONFIGURE_HINT)) return `${message} ${DETERMINISTIC_MESSAGE}`;
  return message;
}

function messageOf(error: unknown): string {
  if (error instanceof RunFailure || error instanceof AppError) return error.message;
  return 'The run failed because of an internal error.';
}
