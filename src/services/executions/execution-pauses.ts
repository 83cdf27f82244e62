/**
 * Runs that wait for a person: resume a `paused` run with a decision (approve, reject with a reason, edit the call's
 * arguments, answer a question), cancel a paused or running one, and fail those whose wait expired. The pause lives
 * in the record (what it waits for, until when) and in the run's LangGraph checkpoint, so all of this works after a
 * restart and from any replica; a run going on elsewhere is cancelled through the signal bus.
 */
import type { Principal } from '../../domain/account';
import { BadRequestError, ConflictError, NotFoundError } from '../../domain/errors';
import { emptyExecutionUsage, type Execution } from '../../domain/execution';
import { isTerminal } from '../../domain/prediction';
import type { ExecutionRuns } from './execution-runs';
import { notifyChange, type StartExecution } from './execution-run';
import { buildUsage, plannerTokens } from './execution-usage';
import type { ExecuteOptions, ExecutionsService, ExecutionsServiceDeps, ResumeDecision } from './executions.types';

/** The signal-bus channel a cancel of a run going on in another replica travels on. */
export const CANCEL_CHANNEL = 'executions:cancel';

/** What resuming, cancelling and expiring reach: the service's dependencies, the runs in flight and the starter. */
interface PauseContext {
  deps: ExecutionsServiceDeps;
  runs: ExecutionRuns;
  start: StartExecution;
}

export function createExecutionPauses(
  deps: ExecutionsServiceDeps,
  runs: ExecutionRuns,
  start: StartExecution,
): Pick<ExecutionsService, 'resume' | 'cancel' | 'expirePaused'> & { cancelHere(id: string): boolean } {
  const context: PauseContext = { deps, runs, start };
  return {
    cancelHere: (id) => cancelHere(runs, id),
    resume: (principal, id, decision, options = {}) => resumePaused(context, principal, id, decision, options),
    cancel: (principal, id) => cancelExecution(context, principal, id),
    expirePaused: (now = new Date()) => expirePaused(deps, now),
  };
}

/** The caller's execution `id`; 404 when their organisation has none. */
async function owned(deps: ExecutionsServiceDeps, principal: Principal, id: string): Promise<Execution> {
  const found = await deps.store.get(await deps.orgIdFor(principal), id);
  if (!found) throw new NotFoundError('execution', id);
  return found;
}

/**
 * Ends a paused run `failed` with `message` (cancelled, expired); null when it was no longer paused. Like any run
 * that ends, it is billed for the planner tokens it used (its hold went back when it paused): the record says the
 * price, and the wallet is debited once the record is ended (so a resume that won the race bills nothing twice).
 */
async function endPaused(
  deps: ExecutionsServiceDeps,
  execution: Execution,
  message: string,
): Promise<Execution | null> {
  const tier = execution.request.serviceTier;
  const { inputTokens, outputTokens } = plannerTokens(execution.steps);
  const charge =
    inputTokens + outputTokens > 0
      ? {
          pricing: deps.planners.resolve(execution.request.model).pricing,
          inputTokens,
          outputTokens,
          multiplier: emptyExecutionUsage(tier).mode_multiplier,
          reason: `agent.execute ${execution.model} ${execution.id}`,
        }
      : null;
  const usage = buildUsage({
    steps: execution.steps,
    tier,
    durationMs: execution.steps.reduce((sum, step) => sum + step.durationMs, 0),
    message,
    cost: charge ? deps.billing.price(charge) : null,
  });
  const done = await deps.store.transition(execution.id, ['paused'], 'failed', {
    pause: null,
    usage,
    errorMessage: message,
    completedAt: new Date(),
  });
  if (!done) return null;
  if (charge) {
    await deps.billing.charge(execution.orgId, charge).catch((error: unknown) => {
      deps.logger.warn('could not bill an ended paused run', { execution: execution.id, error: String(error) });
    });
  }
  await deps.runtime.discard(execution.id).catch(() => undefined);
  notifyChange(deps, done.id);
  deps.onFinished(done);
  return done;
}

/** What a run whose wait expired says: what it waited for, and for how long. */
function expiredMessage(deps: ExecutionsServiceDeps, execution: Execution): string {
  const pause = execution.pause;
  const what =
    pause?.kind === 'question'
      ? `an answer to "${pause.question ?? ''}"`
      : `approval of the call to '${pause?.toolCall?.name ?? 'a tool'}'`;
  const hours = Math.round((deps.limits.pauseTtlMs / 3_600_000) * 100) / 100;
  return (
    `The run waited ${hours} h for ${what} and expired (PRISM_AGENT_PAUSE_TTL_S); ` +
    'nobody resumed it. Send it again to start over.'
  );
}

const expired = (execution: Execution, now: Date): boolean =>
  execution.pause !== null && new Date(execution.pause.expiresAt).getTime() <= now.getTime();

/** Refuses a decision that does not fit what the run waits for (an answer to an approval, an edit of a question). */
function checkDecision(execution: Execution, decision: ResumeDecision): void {
  const kind = execution.pause?.kind ?? 'tool_approval';
  if (decision.action === 'answer' && kind === 'tool_approval') {
    throw new BadRequestError(
      `The run waits for approval of a call to '${execution.pause?.toolCall?.name ?? 'a tool'}': ` +
        'send approve, reject (with a reason) or edit (with arguments).',
      'invalid_decision',
      'action',
    );
  }
  if (decision.action === 'edit' && kind === 'question') {
    throw new BadRequestError(
      'The run waits for an answer to a question: send answer (with text).',
      'invalid_decision',
      'action',
    );
  }
}

/** Aborts the run if it is going on in this process. */
function cancelHere(runs: ExecutionRuns, id: string): boolean {
  const controller = runs.running.get(id);
  if (!controller) return false;
  controller.abort();
  return true;
}

/** Continues a paused run with a person's decision (now, or detached); 409 when it is not paused or expired. */
async function resumePaused(
  context: PauseContext,
  principal: Principal,
  id: string,
  decision: ResumeDecision,
  options: ExecuteOptions,
): Promise<Execution> {
  const { deps, start } = context;
  const execution = await owned(deps, principal, id);
  if (execution.status !== 'paused') {
    throw new ConflictError(
      `Execution ${id} is ${execution.status}, not paused: there is nothing to resume.`,
      'execution_not_paused',
    );
  }
  if (expired(execution, new Date())) {
    await endPaused(deps, execution, expiredMessage(deps, execution));
    throw new ConflictError(expiredMessage(deps, execution), 'execution_not_paused');
  }
  checkDecision(execution, decision);
  if (options.detach) {
    void start(id, true, options, decision).catch((error: unknown) =>
      deps.logger.warn('a resumed execution did not start', { execution: id, error: String(error) }),
    );
    return execution;
  }
  // 409 when another request resumed or cancelled it first (the claim from `paused` is compare-and-set).
  const done = await start(id, true, options, decision);
  return done ?? (await owned(deps, principal, id));
}

/** Cancels a paused, queued or running run (here, or on another replica through the signal bus). */
async function cancelExecution(context: PauseContext, principal: Principal, id: string): Promise<Execution> {
  const { deps, runs } = context;
  const execution = await owned(deps, principal, id);
  if (isTerminal(execution.status)) {
    throw new ConflictError(`Execution ${id} already ended (${execution.status}).`, 'execution_finished');
  }
  if (execution.status === 'paused') {
    const done = await endPaused(deps, execution, 'The run was cancelled while it waited for a person.');
    if (done) return done;
  } else if (!cancelHere(runs, id)) {
    // Pending or enqueued here, or running on another replica: a queued run is failed at once, a running one
    // is told to stop (its replica ends it `failed` and saves the record).
    const message = 'The run was cancelled.';
    const done = await deps.store.transition(id, ['pending', 'enqueued'], 'failed', {
      usage: { ...execution.usage, message },
      errorMessage: message,
      completedAt: new Date(),
    });
    if (done) {
      runs.releaseHold(id);
      notifyChange(deps, id);
      deps.onFinished(done);
      return done;
    }
    await deps.signals?.publish(CANCEL_CHANNEL, id);
  }
  return owned(deps, principal, id);
}

/** Fails the paused runs whose wait ended before `now`; how many it ended. */
async function expirePaused(deps: ExecutionsServiceDeps, now: Date): Promise<number> {
  let count = 0;
  for (const execution of await deps.store.paused()) {
    if (!expired(execution, now)) continue;
    if (await endPaused(deps, execution, expiredMessage(deps, execution))) count += 1;
  }
  return count;
}
