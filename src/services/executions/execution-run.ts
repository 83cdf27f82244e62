/**
 * Running one execution: claim the record, build the planner task (skills, inputs, schema, sub-goals), run it in
 * program mode (a verified program of the skill, no model) or on the agent runtime's loop, stop it at its spending
 * limit, and finish it `completed` or `failed` with usage and cost settled against the hold taken at acceptance.
 * Shared by `execute` (a run now), the job queue (`batch`) and resumption after a restart. A run that stops to wait
 * for a person ends `paused` instead (its hold released, its checkpoint kept); `start` with a decision continues it.
 */
import { orgWorkPrincipal, withKeyOf, type Principal } from '../../domain/account';
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

/** What every part of a run reaches: the service's dependencies and the runs in flight (holds, controllers). */
interface Runner {
  deps: ExecutionsServiceDeps;
  runs: ExecutionRuns;
}

/** How a run ended, as `finish` records and bills it. */
interface RunOutcome {
  status: 'completed' | 'failed';
  response: Record<string, unknown> | null;
  steps: ExecutionStep[];
  mode: ExecutionMode;
  message: string | null;
  startedAt: number;
  resolved: ResolvedPlanner;
}

export function createExecutionStarter(deps: ExecutionsServiceDeps, runs: ExecutionRuns): StartExecution {
  const runner: Runner = { deps, runs };
  return (id, resume, follow, decision) => startExecution(runner, id, resume, follow, decision);
}

const orgPrincipal = (orgId: string): Principal => orgWorkPrincipal(orgId, 'agent-runtime');

/** Claims the record (from the queue, or from `paused` with a person's decision) and runs it in its span. */
async function startExecution(
  runner: Runner,
  id: string,
  resume: boolean,
  follow?: ExecuteOptions,
  decision?: PauseDecision,
): Promise<Execution | null> {
  const { deps, runs } = runner;
  const { store } = deps;
  const execution = await store.getById(id);
  if (!execution || isTerminal(execution.status)) {
    runs.releaseHold(id);
    return execution;
  }
  // A paused run continues (not a new start of the restart policy); anything else is claimed from the queue.
  const claimed = decision
    ? await store.transition(id, ['paused'], 'running', { pause: null })
    : await store.transition(id, ['pending', 'enqueued'], 'running', { attempts: execution.attempts + 1 });
  if (!claimed) {
    runs.releaseHold(id);
    // Another request resumed (or cancelled) the paused run first: this decision changes nothing.
    if (decision) throw new ConflictError(`Execution ${id} is no longer paused.`, 'execution_not_paused');
    return store.getById(id);
  }
  notifyChange(deps, id);
  if (decision) {
    const controller = new AbortController();
    return traceRun(claimed, `resume (${decision.action})`, () =>
      runForTenant(
        claimed.orgId,
        () => runExecution(runner, claimed, true, follow ?? {}, controller, decision),
        controller.signal,
      ),
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
    runForTenant(
      claimed.orgId,
      () => runExecution(runner, claimed, resumed, follow ?? {}, controller),
      controller.signal,
    ),
  );
}

/**
 * Resolves the run's planner and, for a run resumed after a restart (its hold was lost with the process), takes a
 * new hold before it plans again, so it stops at its spending limit and can never debit the wallet below zero.
 */
async function preparePlanner(runner: Runner, execution: Execution): Promise<ResolvedPlanner> {
  const { deps, runs } = runner;
  const resolved = deps.planners.resolve(execution.request.model);
  if (!runs.holds.has(execution.id)) {
    runs.holds.set(
      execution.id,
      await deps.billing.reserve(execution.orgId, {
        pricing: resolved.pricing,
        multiplier: emptyExecutionUsage(execution.request.serviceTier).mode_multiplier,
        maxSteps: deps.limits.maxSteps,
      }),
    );
  }
  return resolved;
}

async function runExecution(
  runner: Runner,
  execution: Execution,
  resume: boolean,
  follow: ExecuteOptions,
  controller: AbortController,
  decision?: PauseDecision,
): Promise<Execution | null> {
  const { runs } = runner;
  const startedAt = Date.now();
  let resolved: ResolvedPlanner;
  try {
    resolved = await preparePlanner(runner, execution);
  } catch (error) {
    return failEarly(runner, execution, error);
  }
  runs.running.set(execution.id, controller);
  const onCancel = (): void => controller.abort();
  if (follow.signal?.aborted) controller.abort();
  follow.signal?.addEventListener('abort', onCancel, { once: true });
  const stepLog: ExecutionStep[] = resume ? [...execution.steps] : [];
  const run: RunState = { execution, resume, follow, controller, startedAt, resolved, stepLog };
  try {
    return await planAndRun(runner, run, decision);
  } catch (error) {
    return finishFailed(runner, run, error);
  } finally {
    follow.signal?.removeEventListener('abort', onCancel);
    runs.running.delete(execution.id);
    runs.releaseHold(execution.id);
  }
}

/** One run in flight: its record, how it was started, and the steps reported so far. */
interface RunState {
  execution: Execution;
  resume: boolean;
  follow: ExecuteOptions;
  controller: AbortController;
  startedAt: number;
  resolved: ResolvedPlanner;
  stepLog: ExecutionStep[];
}

/** The task's tools: the request's and its skills' toolsets, and the remote MCP servers' tools read now. */
async function runTools(deps: ExecutionsServiceDeps, execution: Execution, skills: ParsedSkill[]) {
  const tools = selectRunTools(deps.tools, execution.request.tools, toolsetsOf(execution.request.toolsets, skills));
  // Remote MCP servers' tools join the run, read from each server now (a resumed run reads them again).
  const remote = deps.mcpServers
    ? await deps.mcpServers.toolsForRun(execution.orgId, execution.request.mcpServers ?? [])
    : { tools: [], unavailable: [] };
  tools.push(...remote.tools);
  return { tools, remote };
}

/** Why a run that asked for program mode runs the agent loop instead (said in `usage.message`), or null. */
function programModeNote(
  execution: Execution,
  run: Pick<RunState, 'resume' | 'resolved'>,
  asksPerson: boolean,
  usesRemoteTools: boolean,
  programSkill: ParsedSkill | undefined,
): string | null {
  if (execution.request.mode !== 'program' || run.resume) return null;
  if (asksPerson) {
    return usesRemoteTools
      ? "the run uses remote MCP servers' tools, which a replayed program does not call"
      : 'the run asks a person before some steps, and a replayed program cannot pause';
  }
  if (!run.resolved.programCapable) {
    return `program mode runs only on prism-orion-2 (this run's model is ${execution.request.model})`;
  }
  if (!programSkill) return 'the request names no skill (programs are compiled per skill version)';
  return null;
}

/** Builds the task, replays the skill's program when it may, else runs the agent loop, and finishes the record. */
async function planAndRun(runner: Runner, run: RunState, decision?: PauseDecision): Promise<Execution | null> {
  const { deps } = runner;
  const { execution, resume, controller, resolved } = run;
  // The key the run was asked with (when this process holds the run): its tools' speech counts against its budget.
  const principal = withKeyOf(orgPrincipal(execution.orgId), runner.runs.holds.get(execution.id)?.keyId);
  const { task, skills } = await buildTask(deps, execution, principal);
  // The runtime listens for aborts from its start on; one that came while the task was built stops it here.
  if (controller.signal.aborted) throw new RunFailure('The run was cancelled.', []);
  const { tools, remote } = await runTools(deps, execution, skills);
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
  let programNote = programModeNote(execution, run, asksPerson, remote.tools.length > 0, programSkill);
  if (resolved.programCapable && execution.request.mode === 'program' && programSkill && !resume && !asksPerson) {
    const replay = await runProgramMode(deps, programSkill, task, context(controller.signal));
    if (replay.ok) {
      return await finish(runner, execution, {
        status: 'completed',
        response: replay.response,
        steps: replay.steps,
        mode: 'program',
        message: 'Replayed the compiled program of the skill; no model was called.',
        startedAt: run.startedAt,
        resolved,
      });
    }
    deps.logger.info('program mode fell back to agent mode', { execution: execution.id, reason: replay.reason });
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
      onTrace: (entries) => recordTrace(runner, run, entries),
      // Every execution may pause: `config.require_approval` tools, tools that declare it, skill-graph questions.
      approvals: { tools: execution.request.requireApproval ?? [], questions: questionsOf(skills) },
      ...(decision ? { decision } : {}),
      ...(run.follow.onText ? { onText: run.follow.onText } : {}),
    }),
  );
  const steps = result.trace.map((entry, index) => ({ ...entry, index }));
  if (result.pause) return await pauseRun(runner, execution, result.pause, steps);
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
      (error: unknown) => deps.logger.warn('could not compile a program', { error: String(error) }),
    );
  }
  return await finish(runner, execution, {
    status: 'completed',
    response: result.response,
    steps,
    mode: 'agent',
    message: notes.join(' ') || null,
    startedAt: run.startedAt,
    resolved,
  });
}

/** The loop reported steps: they join the log, the follower hears them, the spending limit is checked, progress saved. */
function recordTrace(runner: Runner, run: RunState, entries: Omit<ExecutionStep, 'index'>[]): void {
  const { deps } = runner;
  const { execution, stepLog, follow } = run;
  for (const entry of entries) {
    const step = { ...entry, index: stepLog.length };
    stepLog.push(step);
    follow.onStep?.(step, stepLog.length);
  }
  stopAtSpendingLimit(runner, execution.id, stepLog, run.controller);
  void deps.store
    .saveProgress(execution.id, { steps: stepLog }, execution.attempts)
    .then(() => notifyChange(deps, execution.id))
    .catch((error: unknown) => deps.logger.warn('could not save execution progress', { error: String(error) }));
}

/** The run threw: a shutdown leaves it `running` for the next start; anything else finishes it `failed`. */
async function finishFailed(runner: Runner, run: RunState, error: unknown): Promise<Execution | null> {
  const { deps, runs } = runner;
  // Stopped by a shutdown: the record stays `running` and its checkpoint lets the next start resume it.
  if (runs.shuttingDown) return null;
  // The checkpoint's trace can lag the steps already reported (a run stopped inside a step): keep the longer.
  const checkpointed = error instanceof RunFailure ? error.trace.map((entry, index) => ({ ...entry, index })) : [];
  const trace = checkpointed.length >= run.stepLog.length ? checkpointed : run.stepLog;
  const message = messageOf(error);
  if (!(error instanceof RunFailure || error instanceof AppError)) {
    deps.logger.error('execution failed unexpectedly', { execution: run.execution.id, error: String(error) });
  }
  return finish(runner, run.execution, {
    status: 'failed',
    response: null,
    steps: trace,
    mode: 'agent',
    message: run.resolved.planner.kind === 'deterministic' ? withPlannerNote(message) : message,
    startedAt: run.startedAt,
    resolved: run.resolved,
  });
}

async function buildTask(
  deps: ExecutionsServiceDeps,
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

async function finish(runner: Runner, execution: Execution, outcome: RunOutcome): Promise<Execution | null> {
  const { deps, runs } = runner;
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
  const hold = runs.holds.get(execution.id);
  runs.holds.delete(execution.id);
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
  const done = await deps.store.transition(
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
    if (await takenOver(deps, execution)) return null;
  } else {
    try {
      if (bill) await (hold ? hold.settle(charge) : deps.billing.charge(execution.orgId, charge));
    } catch (error) {
      deps.logger.warn('could not bill a finished run', { execution: execution.id, error: String(error) });
    } finally {
      hold?.release();
    }
  }
  // A program replayed on its first attempt never entered the loop, so it left no checkpoints to delete (on
  // PostgreSQL the delete is a transaction of five round trips); a later attempt may follow one that did.
  if (outcome.mode === 'agent' || execution.attempts > 1) {
    await deps.runtime.discard(execution.id).catch(() => undefined);
  }
  if (done && outcome.steps.length > 0) writeSteps(deps, done, outcome.steps);
  if (done) {
    notifyChange(deps, done.id);
    deps.onFinished(done);
  }
  return done;
}

/**
 * The run stopped to wait for a person: the record says what for and until when, the hold goes back to the wallet
 * (the steps so far are billed when the run ends), the checkpoint stays for the resume, and the webhook fires.
 */
async function pauseRun(
  runner: Runner,
  execution: Execution,
  pause: RunPause,
  steps: ExecutionStep[],
): Promise<Execution | null> {
  const { deps, runs } = runner;
  runs.releaseHold(execution.id);
  const now = Date.now();
  const waitsFor: ExecutionPause = {
    kind: pause.kind,
    toolCall: pause.kind === 'tool_approval' ? pause.toolCall : null,
    question: pause.kind === 'question' ? pause.question : null,
    goal: pause.goal,
    pausedAt: new Date(now).toISOString(),
    expiresAt: new Date(now + deps.limits.pauseTtlMs).toISOString(),
  };
  const done = await deps.store.transition(
    execution.id,
    ['running'],
    'paused',
    { steps, pause: waitsFor },
    execution.attempts,
  );
  if (!done && (await takenOver(deps, execution))) return null;
  if (done) {
    notifyChange(deps, done.id);
    deps.onFinished(done);
  }
  return done;
}

/**
 * True when another worker took the run over (this one stalled past its lease): its finish was refused, and its
 * checkpoint, now the other worker's, is left alone.
 */
async function takenOver(deps: ExecutionsServiceDeps, execution: Execution): Promise<boolean> {
  const now = await deps.store.getById(execution.id);
  if (!now || now.attempts <= execution.attempts) return false;
  deps.logger.warn('a run taken over by another worker finished late; its outcome is dropped', {
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
function writeSteps(deps: ExecutionsServiceDeps, execution: Execution, steps: ExecutionStep[]): void {
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
      deps.logger.warn('could not store the steps of an execution', { execution: execution.id, error: String(error) }),
  );
}

/**
 * A run's hold is its ceiling: once the planner tokens used so far cost more than was held at acceptance, the
 * run stops (failed, billed the amount held) instead of spending money the wallet was never asked for.
 */
function stopAtSpendingLimit(runner: Runner, id: string, steps: ExecutionStep[], controller: AbortController): void {
  const hold = runner.runs.holds.get(id);
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

async function failEarly(runner: Runner, execution: Execution, error: unknown): Promise<Execution | null> {
  const { deps, runs } = runner;
  runs.releaseHold(execution.id);
  const message = messageOf(error);
  const done = await deps.store.transition(
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
    notifyChange(deps, done.id);
    deps.onFinished(done);
  }
  return done;
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
