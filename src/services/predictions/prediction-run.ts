/**
 * Running one prediction record: claim it, read its stored input, run it on the extraction engine (or, when its
 * request says so, on the agent runtime through the SkillRunner port), check the output against the schema, settle
 * or release its hold, and store it `completed` or `failed` (a cancelled synchronous call: failed, billed nothing).
 * Shared by `create` (synchronous requests), the job queue (`batch`) and resumption after a restart.
 */
import { AppError, BadRequestError, SchemaInvalidError } from '../../domain/errors';
import { EMPTY_USAGE, isTerminal, type Prediction, type PredictionUsage } from '../../domain/prediction';
import { checkAgainstSchema, schemaProblem } from '../../lib/json-schema';
import { sniffMediaType } from '../../lib/media-type';
import { throwIfCancelled, WorkCancelledError, type CancelSignal } from '../../lib/cancel';
import { runForTenant } from '../../lib/work-tenant';
import type { ExtractionInput, ExtractionOutput } from '../../engines/extraction-engine';
import type { ExtractionHold } from './extraction-billing';
import type { GenerateCommand } from './generate-command';
import type { PredictionsServiceDeps } from './predictions.types';
import { SkillRunInterrupted, type SkillRunHold, type SkillRunner } from './skill-runner';

/** The error message of a synchronous prediction whose caller cancelled it before it finished. */
export const CANCELLED_MESSAGE =
  'The client cancelled the call before the prediction finished; the remaining work was not done and nothing was billed.';

/** Holds of batch requests waiting in the job queue, by prediction id (a restart forgets them). */
export interface QueuedHolds {
  queuedHolds: Map<string, ExtractionHold>;
  /** The same for batch requests run on the agent runtime (their budget is held as an execution's). */
  queuedRunHolds: Map<string, SkillRunHold>;
}

export function createQueuedHolds(): QueuedHolds {
  return { queuedHolds: new Map(), queuedRunHolds: new Map() };
}

export interface PredictionRunner {
  /** Runs a record on the runtime when its request says so, else on the extraction engine. */
  run: (
    prediction: Prediction,
    hold: ExtractionHold | null,
    runHold: SkillRunHold | null,
    onProgress?: (done: number, total: number) => void,
    signal?: CancelSignal,
  ) => Promise<Prediction>;
  /** The hold a run settles: its own, or (work resumed after a restart) a direct debit; null when free. */
  holdFor: (prediction: Prediction) => ExtractionHold | null;
  /** The schema to fill and the domain's instructions; the same for a new request and for a stored record. */
  schemaFor: (command: Pick<GenerateCommand, 'kind' | 'domain' | 'request'>) => {
    schema: Record<string, unknown> | null;
    prompt: string | null;
  };
}

export function createPredictionRunner(deps: PredictionsServiceDeps, held: QueuedHolds): PredictionRunner {
  return {
    run: (prediction, hold, runHold, onProgress, signal) =>
      runPrediction(deps, prediction, hold, runHold, onProgress, signal),
    holdFor: (prediction) => holdFor(deps, held, prediction),
    schemaFor: (command) => schemaFor(deps, command),
  };
}

/** The hold a run settles: its own, or (work resumed after a restart) a direct debit; null when free. */
function holdFor(deps: PredictionsServiceDeps, held: QueuedHolds, prediction: Prediction): ExtractionHold | null {
  const queued = held.queuedHolds.get(prediction.id);
  if (queued) {
    held.queuedHolds.delete(prediction.id);
    return queued;
  }
  const wallet = deps.wallet ?? null;
  if (!wallet) return null;
  // Resumed after a restart, its hold died with the old process: the bill is held when it is known, so a wallet
  // emptied meanwhile fails the request (402) instead of going below zero.
  return {
    settle: async (credits, reason, speechSeconds = 0) =>
      (await wallet.reserve(prediction.orgId, credits, speechSeconds)).settle(credits, reason, speechSeconds),
    release: () => undefined,
  };
}

/** The schema to fill and the domain's instructions; the same for a new request and for a stored record. */
function schemaFor(
  deps: PredictionsServiceDeps,
  command: Pick<GenerateCommand, 'kind' | 'domain' | 'request'>,
): {
  schema: Record<string, unknown> | null;
  prompt: string | null;
} {
  const domain = command.domain ? deps.hub.find(command.domain) : null;
  const custom = command.request.jsonSchema;
  if (custom) {
    const problem = schemaProblem(custom);
    if (problem) throw new SchemaInvalidError('config.json_schema', problem);
    return { schema: custom, prompt: command.request.instructions ?? domain?.prompt ?? null };
  }
  if (command.kind === 'image_schema' || command.request.proposeSchema) return { schema: null, prompt: null };
  if (!command.domain) {
    throw new BadRequestError(
      'Name a `domain` (see GET /v1/hub/domains) or send `config.json_schema`.',
      null,
      'domain',
    );
  }
  // An unknown domain is 404 `domain_not_found`, naming the domains it may mean (`receipt` → `document.receipt`).
  const named = domain ?? deps.hub.get(command.domain);
  return { schema: named.jsonSchema, prompt: command.request.instructions ?? named.prompt };
}

async function loadInput(deps: PredictionsServiceDeps, prediction: Prediction): Promise<ExtractionInput> {
  const [ref] = prediction.inputs;
  const bytes = ref ? await deps.blobs.read(ref.sha256) : null;
  if (!ref || !bytes) throw new Error(`input of prediction ${prediction.id} is missing from the blob store`);
  const sniffed = sniffMediaType(bytes);
  const family = sniffed.family === 'unknown' ? 'image' : sniffed.family;
  return { bytes, mimeType: ref.contentType, family, filename: ref.filename };
}

function usageOf(output: ExtractionOutput, notes: string[]): PredictionUsage {
  const message = [output.message, ...notes].filter(Boolean).join(' ');
  return {
    elements_processed: output.elementsProcessed,
    element_type: output.elementType,
    credits_used: Math.max(0, Math.round(output.credits)),
    steps: 1,
    message: message || null,
  };
}

/** Runs a record on the agent runtime (its request names the planner and the skills); same contract as `execute`. */
async function executeOnRuntime(
  deps: PredictionsServiceDeps,
  prediction: Prediction,
  runner: SkillRunner,
  agent: NonNullable<Prediction['request']['agent']>,
  hold: SkillRunHold | null,
): Promise<Prediction> {
  const running = await claim(deps, prediction, hold);
  if (!running) return (await deps.store.getById(prediction.id)) ?? prediction;
  let finished: Prediction | null;
  let failure: Error | null = null;
  try {
    const input = await loadInput(deps, running);
    const { schema } = schemaFor(deps, running);
    const result = await runForTenant(running.orgId, () =>
      runner.run(
        {
          predictionId: running.id,
          orgId: running.orgId,
          kind: running.kind,
          input,
          schema,
          domain: running.domain,
          instructions: running.request.instructions ?? null,
          skills: agent.skills,
          model: agent.model,
        },
        hold,
      ),
    );
    hold = null;
    finished = await deps.store.transition(
      running.id,
      ['running'],
      'completed',
      {
        response: result.response,
        usage: result.usage,
        completedAt: new Date(),
      },
      running.attempts,
    );
  } catch (error) {
    hold?.release();
    // A shutdown stopped the run: the record stays `running` and the next start runs it again.
    if (error instanceof SkillRunInterrupted) return running;
    failure = error instanceof Error ? error : new Error(String(error));
    finished = await recordFailure(deps, running, error, 'prediction failed on the agent runtime');
  }
  return conclude(deps, running, finished, failure);
}

/**
 * Moves a pending or enqueued record to running. Null when it was no longer waiting (another worker or a cancel
 * got there first); the hold is given back then, and when the move itself fails.
 */
async function claim(
  deps: PredictionsServiceDeps,
  prediction: Prediction,
  hold: { release(): void } | null,
): Promise<Prediction | null> {
  const running = await deps.store
    .transition(prediction.id, ['pending', 'enqueued'], 'running', { attempts: prediction.attempts + 1 })
    .catch((error: unknown) => {
      hold?.release();
      throw error;
    });
  if (!running) hold?.release();
  return running;
}

/** Stores a run that threw as failed: an AppError's own message, otherwise a generic one (and the error logged). */
function recordFailure(
  deps: PredictionsServiceDeps,
  running: Prediction,
  error: unknown,
  logMessage: string,
): Promise<Prediction | null> {
  const message = error instanceof AppError ? error.message : 'Internal error while running the prediction.';
  if (!(error instanceof AppError)) deps.logger.error(logMessage, { prediction: running.id, error: String(error) });
  return deps.store.transition(
    running.id,
    ['running'],
    'failed',
    {
      response: null,
      usage: { ...EMPTY_USAGE, credits_used: 0, message },
      errorMessage: message,
      completedAt: new Date(),
    },
    running.attempts,
  );
}

/**
 * Announces a finished record (webhooks, waiters), then returns it, or throws the failure that ended it. When the
 * finishing write was refused because another worker took the record over (this one stalled past its lease), the
 * outcome is dropped and said so: the record is that worker's now.
 */
async function conclude(
  deps: PredictionsServiceDeps,
  running: Prediction,
  finished: Prediction | null,
  failure: Error | null,
): Promise<Prediction> {
  if (!finished) {
    const now = await deps.store.getById(running.id);
    if (now && now.attempts > running.attempts) {
      deps.logger.warn('a run taken over by another worker finished late; its outcome is dropped', {
        prediction: running.id,
        attempt: running.attempts,
        current: now.attempts,
      });
      return now;
    }
  }
  const final = finished ?? running;
  if (isTerminal(final.status)) deps.onFinished(final);
  if (failure) throw failure;
  return final;
}

/** Stores a run its caller cancelled as failed, with nothing billed; not an error worth logging. */
function recordCancelled(deps: PredictionsServiceDeps, running: Prediction): Promise<Prediction | null> {
  return deps.store.transition(
    running.id,
    ['running'],
    'failed',
    {
      response: null,
      usage: { ...EMPTY_USAGE, credits_used: 0, message: CANCELLED_MESSAGE },
      errorMessage: CANCELLED_MESSAGE,
      completedAt: new Date(),
    },
    running.attempts,
  );
}

/**
 * Runs a record that is pending or enqueued; returns the final record. Throws the engine's AppError, or
 * `WorkCancelledError` when `signal` aborted before the work finished.
 */
async function runOnEngine(
  deps: PredictionsServiceDeps,
  prediction: Prediction,
  hold: ExtractionHold | null,
  onProgress?: (done: number, total: number) => void,
  signal?: CancelSignal,
): Promise<Prediction> {
  const running = await claim(deps, prediction, hold);
  if (!running) return (await deps.store.getById(prediction.id)) ?? prediction;
  let finished: Prediction | null;
  let failure: Error | null = null;
  try {
    const input = await loadInput(deps, running);
    const { schema, prompt } = schemaFor(deps, running);
    // The organisation's pages take turns with other organisations' in the shared OCR pool.
    // With a signal, the engines stop starting pages and frames once the caller cancels.
    const output = await runForTenant(
      running.orgId,
      () =>
        deps.engine.run({
          kind: running.kind,
          model: running.model,
          domain: running.domain,
          schema,
          prompt,
          request: running.request,
          input,
          ...(onProgress ? { onProgress } : {}),
        }),
      signal,
    );
    // Cancelled while its last page was on a worker: nobody takes the result, so it is neither kept nor billed.
    throwIfCancelled(signal);
    const notes: string[] = running.request.runtimeNote ? [running.request.runtimeNote] : [];
    if (schema && output.response && typeof output.response === 'object') {
      const check = checkAgainstSchema(schema, stripMetadata(output.response));
      if (!check.valid) notes.push(`Output does not fully satisfy the schema (${check.errors.join('; ')}).`);
    }
    // The work is done. The finishing write is the claim (guarded by `attempts`): only the worker whose write is
    // accepted debits what it read, so a run another worker took over is charged once, by whichever finishes it;
    // a late finish gives its hold back (the hold is given back on any failure up to here too).
    const credits = Math.max(0, Math.round(output.credits));
    const speechSeconds = Math.max(0, Math.round(output.speechSeconds ?? 0));
    const settling = hold;
    hold = null;
    try {
      finished = await deps.store.transition(
        running.id,
        ['running'],
        'completed',
        {
          response: output.response,
          usage: usageOf(output, notes),
          completedAt: new Date(),
        },
        running.attempts,
      );
    } catch (error) {
      settling?.release();
      throw error;
    }
    if (finished && (credits > 0 || speechSeconds > 0)) {
      await settling?.settle(credits, `extraction ${running.model} ${running.id}`, speechSeconds);
    } else settling?.release();
  } catch (error) {
    hold?.release();
    failure = error instanceof Error ? error : new Error(String(error));
    finished =
      error instanceof WorkCancelledError
        ? await recordCancelled(deps, running)
        : await recordFailure(deps, running, error, 'prediction failed');
  }
  return conclude(deps, running, finished, failure);
}

/** Runs a record on the runtime when its request says so, else on the extraction engine. */
async function runPrediction(
  deps: PredictionsServiceDeps,
  prediction: Prediction,
  hold: ExtractionHold | null,
  runHold: SkillRunHold | null,
  onProgress?: (done: number, total: number) => void,
  signal?: CancelSignal,
): Promise<Prediction> {
  const agent = prediction.request.agent;
  if (!agent) return runOnEngine(deps, prediction, hold, onProgress, signal);
  const skillRunner = deps.skillRunner ?? null;
  if (!skillRunner) {
    runHold?.release();
    throw new Error(`prediction ${prediction.id} needs the agent runtime, which is not wired`);
  }
  return executeOnRuntime(deps, prediction, skillRunner, agent, runHold);
}

/** Drops `<field>_metadata` siblings (confidence and grounding) before schema validation. */
function stripMetadata(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripMetadata);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([key]) => !key.endsWith('_metadata'))
      .map(([key, v]) => [key, stripMetadata(v)]),
  );
}
