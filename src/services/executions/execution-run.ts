/**
 * Running one execution: claim the record, build the planner task (skills, inputs, schema, sub-goals), run it in
 * program mode (a verified program of the skill, no model) or on the agent runtime's loop, stop it at its spending
 * limit, and finish it `completed` or `failed` with usage and cost settled against the hold taken at acceptance.
 * Shared by `execute` (a run now), the job queue (`batch`) and resumption after a restart. A run that stops to wait
 * for a person ends `paused` instead (its hold released, its checkpoint kept); `start` with a decision continues it.
 */
import { orgWorkPrincipal, type Principal } from '../../domain/account';
import { AppError, ConflictError } from '../../domain/errors';
import {
  emptyExecutionUsage,
  type Execution,
  type ExecutionMode,
  type ExecutionPause,
  type ExecutionStep,
} from '../../domain/execution';
import { isTerminal } from '../../domain/prediction';
import type { ParsedSkill } from '../../domain/skill';
import { runForTenant } from '../../lib/work-tenant';
import { RunFailure } from '../../agents/agent-runtime';
import type { PauseDecision, PlannerTask, RunPause, ToolContext } from '../../agents/sdk';
import { selectRunTools } from '../../agents/toolsets';
import { markSpanFailed, recordSpan, withSpan } from '../../lib/tracing';
import { CONFIGURE_HINT, DETERMINISTIC_MESSAGE } from '../../agents/planners/deterministic.planner';
import { plannerInputs } from './execution-inputs';
import type { ExecutionRuns } from './execution-runs';
import { loopRunSpec, resolveSkills, toolsetsOf } from './execution-skills';
import { buildUsage, plannerTokens } from './execution-usage';
import type { ExecuteOptions, ExecutionsServiceDeps, ResolvedPlanner } from './executions.types';
import { runProgramMode, recordProgram } from './program-mode';

/**
 * Claims execution `id` and runs it (resuming from its checkpoint when `resume` and one exists). With a `decision`
 * it continues a `paused` run from its checkpoint with a person's answer (claimed from `paused`, not a new start).
 */
export type StartExecution = (
  id: string,
  resume: boolean,
  follow?: ExecuteOptions,
  decision?: PauseDecision,
) => Promise<Execution | null>;

export function createExecutionStarter(deps: ExecutionsServiceDeps, runs: ExecutionRuns): StartExecution {
  const { store, logger } = deps;
  const { running, holds, releaseHold } = runs;
  const notify = (id: string): void => notifyChange(deps, id);

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
    // The hold taken at acceptance (or, for a run resumed after a restart, when it started again) is settled.
    const hold = holds.get(execution.id);
    holds.delete(execution.id);
    // The record is written first, with the price the settlement will debit, and its write is the claim: it is
    // guarded by the attempt, so of two workers finishing one run (one took it over from the other, which stalled)
    // only the one whose write is accepted debits the wallet. The other gives its hold back: billed once, always.
    const cost = bill ? (hold ? hold.price(charge) : deps.billing.price(charge)) : null;
    const usage = buildUsage({
      steps: outcome.steps,
      tier,
      durationMs: Date.now() - outcome.startedAt,
      message: outcome.message,
      cost,
    });
    const done = await store.transition(
      execution.id,
      ['running'],
      outcome.status,
      {
        response: outcome.response,
        usage,
        steps: outcome.steps,
        executionMode: outcome.mode,
        errorMessage: outcome.status === 'failed' ? outcome.message : null,
        completedAt: new Date(),
      },
      execution.attempts,
    );
    if (!done) {
      hold?.release();
      if (await takenOver(execution)) return null;
    } else {
      try {
        if (bill) await (hold ? hold.settle(charge) : deps.billing.charge(execution.orgId, charge));
      } catch (error) {
        logger.warn('could not bill a finished run', { execution: execution.id, error: String(error) });
      } finally {
        hold?.release();
      }
    }
    await deps.runtime.discard(execution.id).catch(() => undefined);
    if (done && outcome.steps.length > 0) writeSteps(done, outcome.steps);
    if (done) {
      notify(done.id);
      deps.onFinished(done);
    }
    return done;
  }

  /**
   * The run stopped to wait for a person: the record says what for and until when, the hold goes back to the wallet
   * (the steps so far are billed when the run ends), the checkpoint stays for the resume, and the webhook fires.
   */
  async function pauseRun(execution: Execution, pause: RunPause, steps: ExecutionStep[]): Promise<Execution | null> {
    releaseHold(execution.id);
    const now = Date.now();
    const waitsFor: ExecutionPause = {
      kind: pause.kind,
      toolCall: pause.kind === 'tool_approval' ? pause.toolCall : null,
      question: pause.kind === 'question' ? pause.question : null,
      goal: pause.goal,
      pausedAt: new Date(now).toISOString(),
      expiresAt: new Date(now + deps.limits.pauseTtlMs).toISOString(),
    };
    const done = await store.transition(
      execution.id,
      ['running'],
      'paused',
      { steps, pause: waitsFor },
      execution.attempts,
    );
    if (!done && (await takenOver(execution))) return null;
    if (done) {
      notify(done.id);
      deps.onFinished(done);
    }
    return done;
  }

  /**
   * True when another worker took the run over (this one stalled past its lease): its finish was refused, and its
   * checkpoint, now the other worker's, is left alone.
   */
  async function takenOver(execution: Execution): Promise<boolean> {
    const now = await store.getById(execution.id);
    if (!now || now.attempts <= execution.attempts) return false;
    logger.warn('a run taken over by another worker finished late; its outcome is dropped', {
      execution: execution.id,
      attempt: execution.attempts,
      current: now.attempts,
    });
    return true;
  }

  /**
   * The run's steps as the `steps.json` artifact of the execution (each step's state, tool, arguments, output and
   * tokens), as a generate-with-skills prediction files them; `GET /v1/artifacts?execution_id=` lists it. Written
   * after the answer (artifacts.writeSoon: its fsyncs cost more than a program replay); listing waits for it.
   */
  function writeSteps(execution: Execution, steps: ExecutionStep[]): void {
    deps.artifacts.writeSoon(
      orgPrincipal(execution.orgId),
      { executionId: execution.id },
      {
        kind: 'json',
        filename: 'steps.json',
        mimeType: 'application/json',
        bytes: Buffer.from(JSON.stringify(steps, null, 2)),
      },
      (error) =>
        logger.warn('could not store the steps of an execution', { execution: execution.id, error: String(error) }),
    );
  }

  async function run(
    execution: Execution,
    resume: boolean,
    follow: ExecuteOptions,
    controller: AbortController,
    decision?: PauseDecision,
  ): Promise<Execution | null> {
    const startedAt = Date.now();
    const principal = orgPrincipal(execution.orgId);
    let resolved: ResolvedPlanner;
    try {
      resolved = deps.planners.resolve(execution.request.model);
      // A run resumed after a restart lost its hold with the process: it takes a new one before it plans again,
      // so it stops at its spending limit and can never debit the wallet below zero (402 fails it if it cannot).
      if (!holds.has(execution.id)) {
        holds.set(
          execution.id,
          await deps.billing.reserve(execution.orgId, {
            pricing: resolved.pricing,
            multiplier: emptyExecutionUsage(execution.request.serviceTier).mode_multiplier,
            maxSteps: deps.limits.maxSteps,
          }),
        );
      }
    } catch (error) {
      return failEarly(execution, error);
    }
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
      // Remote MCP servers' tools join the run, read from each server now (a resumed run reads them again).
      const remote = deps.mcpServers
        ? await deps.mcpServers.toolsForRun(execution.orgId, execution.request.mcpServers ?? [])
        : { tools: [], unavailable: [] };
      tools.push(...remote.tools);
      const context = (signal: ToolContext['signal']): ToolContext =>
        deps.toolContext.create(principal, { executionId: execution.id, signal, skills });

      const programSkill = skills[0];
      // A replayed program runs its tools without the loop, so it cannot stop to ask a person first.
      // (Nor can it call remote MCP servers' tools, which belong to one run: such runs are never programs either.)
      const asksPerson =
        remote.tools.length > 0 ||
        (execution.request.requireApproval ?? []).length > 0 ||
        tools.some((t) => t.needsApproval) ||
        Object.keys(questionsOf(skills)).length > 0;
      /** Why a run that asked for program mode runs the agent loop instead (said in `usage.message`). */
      let programNote: string | null = null;
      if (execution.request.mode === 'program' && !resume) {
        if (asksPerson) {
          programNote =
            remote.tools.length > 0
              ? "the run uses remote MCP servers' tools, which a replayed program does not call"
              : 'the run asks a person before some steps, and a replayed program cannot pause';
        } else if (!resolved.programCapable) {
          programNote = `program mode runs only on prism-orion-2 (this run's model is ${execution.request.model})`;
        } else if (!programSkill) {
          programNote = 'the request names no skill (programs are compiled per skill version)';
        }
      }
      if (resolved.programCapable && execution.request.mode === 'program' && programSkill && !resume && !asksPerson) {
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
              .saveProgress(execution.id, { steps: stepLog }, execution.attempts)
              .then(() => notify(execution.id))
              .catch((error: unknown) => logger.warn('could not save execution progress', { error: String(error) }));
          },
          // Every execution may pause: `config.require_approval` tools, tools that declare it, skill-graph questions.
          approvals: { tools: execution.request.requireApproval ?? [], questions: questionsOf(skills) },
          ...(decision ? { decision } : {}),
          ...(follow.onText ? { onText: follow.onText } : {}),
        }),
      );
      const steps = result.trace.map((entry, index) => ({ ...entry, index }));
      if (result.pause) return await pauseRun(execution, result.pause, steps);
      const notes: string[] = [];
      if (remote.unavailable.length > 0) {
        notes.push(`Some MCP servers could not be used: ${remote.unavailable.join('; ')}.`);
      }
      if (programNote) notes.push(`Program mode did not engage: ${programNote}; the agent loop ran instead.`);
      if (resolved.planner.kind === 'deterministic') notes.push(DETERMINISTIC_MESSAGE);
      if (result.schemaErrors.length > 0) {
        notes.push(`The response does not fully match the schema: ${result.schemaErrors.join('; ')}.`);
      }
      // A run a person steered (approved, edited, refused calls) is not compiled into a program replayed unasked.
      if (resolved.programCapable && programSkill && result.schemaErrors.length === 0 && !asksPerson) {
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
      if (runs.shuttingDown) return null;
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
    const done = await store.transition(
      execution.id,
      ['running'],
      'failed',
      {
        usage: { ...emptyExecutionUsage(execution.request.serviceTier), message },
        errorMessage: message,
        completedAt: new Date(),
      },
      execution.attempts,
    );
    if (done) {
      notify(done.id);
      deps.onFinished(done);
    }
    return done;
  }

  async function start(
    id: string,
    resume: boolean,
    follow?: ExecuteOptions,
    decision?: PauseDecision,
  ): Promise<Execution | null> {
    const execution = await store.getById(id);
    if (!execution || isTerminal(execution.status)) {
      releaseHold(id);
      return execution;
    }
    // A paused run continues (not a new start of the restart policy); anything else is claimed from the queue.
    const claimed = decision
      ? await store.transition(id, ['paused'], 'running', { pause: null })
      : await store.transition(id, ['pending', 'enqueued'], 'running', { attempts: execution.attempts + 1 });
    if (!claimed) {
      releaseHold(id);
      // Another request resumed (or cancelled) the paused run first: this decision changes nothing.
      if (decision) throw new ConflictError(`Execution ${id} is no longer paused.`, 'execution_not_paused');
      return store.getById(id);
    }
    notify(id);
    if (decision) {
      const controller = new AbortController();
      return traceRun(claimed, `resume (${decision.action})`, () =>
        runForTenant(claimed.orgId, () => run(claimed, true, follow ?? {}, controller, decision), controller.signal),
      );
    }
    // A queued run's wait for the queue is a span of its own (from its acceptance to now).
    if (claimed.request.batch && !resume) {
      recordSpan('queue wait', claimed.createdAt, { 'prism.execution.id': id, 'prism.queue': 'execution' });
    }
    const resumed = resume && (await deps.runtime.hasCheckpoint(id));
    // The run's tool reads take turns with other organisations' in the shared OCR pool, and its cancel signal is the
    // work's: a cancelled run stops the document or video a tool is reading at its next page or frame.
    const controller = new AbortController();
    return traceRun(claimed, resumed ? 'resume' : 'start', () =>
      runForTenant(claimed.orgId, () => run(claimed, resumed, follow ?? {}, controller), controller.signal),
    );
  }

  return start;
}

/**
 * A deterministic run's failure with the note on what planned it, said once: a planner refusal already says it
 * needs a language model and names the setting to configure, so the note is not added to it again.
 */
export function withPlannerNote(message: string): string {
  if (!message.includes(CONFIGURE_HINT)) return `${message} ${DETERMINISTIC_MESSAGE}`;
  return message;
}

/** The signal-bus channel that says an execution's record changed (a step saved, a new status). */
export const changeChannel = (id: string): string => `executions:changed:${id}`;

/** Tells whoever follows execution `id` that its record changed; never waits, never throws. */
export function notifyChange(deps: Pick<ExecutionsServiceDeps, 'signals' | 'logger'>, id: string): void {
  deps.signals?.publish(changeChannel(id), '1').catch((error: unknown) => {
    deps.logger.warn('could not signal an execution change', { execution: id, error: String(error) });
  });
}

/** The questions the run's skill-graph states ask before they are worked on (`pauses:` in prism.yaml). */
function questionsOf(skills: ParsedSkill[]): Record<string, string> {
  return skills.find((s) => (s.config?.graphStates.length ?? 0) > 0)?.config?.pauses ?? {};
}

function messageOf(error: unknown): string {
  if (error instanceof RunFailure || error instanceof AppError) return error.message;
  return 'The run failed because of an internal error.';
}

/** The run's span (GenAI `invoke_agent`): its id, model and how it ended. Off: `work()` as it is. */
function traceRun(execution: Execution, how: string, work: () => Promise<Execution | null>): Promise<Execution | null> {
  return withSpan(
    `invoke_agent ${execution.name || 'execution'}`.slice(0, 120),
    {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': execution.name,
      'gen_ai.request.model': execution.model,
      'prism.execution.id': execution.id,
      'prism.run.start': how,
    },
    async (span) => {
      const ended = await work();
      if (span && ended) {
        span.setAttribute('prism.execution.status', ended.status);
        span.setAttribute('prism.steps', ended.usage.steps);
        span.setAttribute('prism.cost_usd', ended.usage.cost_dollars);
        if (ended.status === 'failed') markSpanFailed(span, ended.errorMessage ?? 'failed');
      }
      return ended;
    },
  );
}
