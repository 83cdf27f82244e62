/**
 * Predictions: the generate endpoints' one service. It resolves and checks the input, stores it with a record,
 * runs the extraction now (synchronous requests) or through the job queue (`batch`), moves the record through
 * its statuses, validates the output against the schema, and hands finished records to the webhook sender.
 * Requests whose skills call for the agent runtime (skill-runner.ts says when) run through the SkillRunner port
 * instead of the extraction engine, with the same record, statuses, job queue and webhooks.
 *
 * A synchronous request may pass a cancel signal (the MCP extraction tools pass their call's): once it aborts, the
 * engines stop starting pages and frames, and the record ends `failed` saying the client cancelled, billed nothing.
 * `POST /v1/{kind}/generate` passes none: over HTTP a prediction is a resource that completes whether or not the
 * client waits for the response (it can be fetched by id later).
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Principal } from '../../domain/account';
import { AppError, BadRequestError, NotFoundError } from '../../domain/errors';
import {
  EMPTY_USAGE,
  isTerminal,
  STRUCTURED_MODEL_ALIASES,
  type Prediction,
  type PredictionUsage,
} from '../../domain/prediction';
import type { BlobStore } from '../../blobs/types';
import { checkAgainstSchema, compileSchema } from '../../lib/json-schema';
import { sniffMediaType } from '../../lib/media-type';
import type { KeyedMutex } from '../../lib/keyed-mutex';
import type { Logger } from '../../lib/logger';
import { checkPublicUrl, SafeFetchError } from '../../lib/safe-fetch';
import { throwIfCancelled, WorkCancelledError, type CancelSignal } from '../../lib/cancel';
import { runForTenant } from '../../lib/work-tenant';
import type { PredictionStore, StoredBytes } from '../../stores/types';
import type { HubService } from '../hub/hub.service';
import type { ExtractionEngine, ExtractionInput, ExtractionOutput } from '../../engines/extraction-engine';
import { resolveSingleInput, type InputResolverDeps } from '../inputs/resolve-input';
import { withSkills } from './skill-domain';
import type { GenerateCommand } from './generate-command';
import type { SkillResolver } from '../../domain/skill';
import { creditBound, type ExtractionHold, type ExtractionWallet } from './extraction-billing';
import {
  AGENT_MODEL_ID,
  callsForRuntime,
  directPathNote,
  SkillRunInterrupted,
  type SkillRunHold,
  type SkillRunner,
} from './skill-runner';

export type { GenerateCommand };

/** A resumed job that keeps dying (e.g. it crashes the process) is given up after this many starts. */
const MAX_ATTEMPTS = 3;

/** The error message of a synchronous prediction whose caller cancelled it before it finished. */
export const CANCELLED_MESSAGE =
  'The client cancelled the call before the prediction finished; the remaining work was not done and nothing was billed.';

export interface PredictionsServiceDeps {
  store: PredictionStore;
  blobs: BlobStore;
  locks: KeyedMutex;
  hub: HubService;
  engine: ExtractionEngine;
  inputs: InputResolverDeps;
  /** Resolves `config.skills`; without it a request naming skills is refused. */
  skills?: SkillResolver;
  orgIdFor: (principal: Principal) => Promise<string>;
  /** Charges extraction by the credit (PRISM_EXTRACTION_USD_PER_PAGE); absent: extraction is free. */
  wallet?: ExtractionWallet | null;
  /** Runs requests whose skills call for the agent runtime; without it they take the extraction engine's path. */
  skillRunner?: SkillRunner | null;
  enqueue: (id: string) => void;
  onFinished: (prediction: Prediction) => void;
  logger: Logger;
}

export interface PredictionsService {
  /**
   * `onProgress` reports pages or frames done on long synchronous inputs (the CLI prints it). `signal` (synchronous
   * requests only; a batch request ignores it) cancels the work: the record ends `failed`, billed nothing, and
   * the call rejects with `WorkCancelledError`.
   */
  create(
    principal: Principal,
    command: GenerateCommand,
    options?: { onProgress?: (done: number, total: number) => void; signal?: CancelSignal },
  ): Promise<Prediction>;
  get(principal: Principal, id: string): Promise<Prediction>;
  list(principal: Principal, page: { skip: number; limit: number }): Promise<Prediction[]>;
  /** Runs one job by id (the job queue's handler). */
  runJob(id: string): Promise<void>;
  /** After a restart: re-enqueue unfinished work, give up on work that keeps failing to finish. */
  resumeUnfinished(): Promise<{ resumed: number; failed: number }>;
}

export function createPredictionsService(deps: PredictionsServiceDeps): PredictionsService {
  const { store, hub, engine, logger } = deps;
  const wallet = deps.wallet ?? null;
  /** Holds of batch requests waiting in the job queue, by prediction id (a restart forgets them). */
  const queuedHolds = new Map<string, ExtractionHold>();
  /** The same for batch requests run on the agent runtime (their budget is held as an execution's). */
  const queuedRunHolds = new Map<string, SkillRunHold>();
  const skillRunner = deps.skillRunner ?? null;

  /** The hold a run settles: its own, or (work resumed after a restart) a direct debit; null when free. */
  function holdFor(prediction: Prediction): ExtractionHold | null {
    const held = queuedHolds.get(prediction.id);
    if (held) {
      queuedHolds.delete(prediction.id);
      return held;
    }
    if (!wallet) return null;
    return { settle: (credits, reason) => wallet.charge(prediction.orgId, credits, reason), release: () => undefined };
  }

  /** The schema to fill and the domain's instructions; the same for a new request and for a stored record. */
  function schemaFor(command: Pick<GenerateCommand, 'kind' | 'domain' | 'request'>): {
    schema: Record<string, unknown> | null;
    prompt: string | null;
  } {
    const domain = command.domain ? hub.find(command.domain) : null;
    const custom = command.request.jsonSchema;
    if (custom) {
      try {
        compileSchema(custom);
      } catch (error) {
        throw new BadRequestError(
          `config.json_schema is not a usable JSON schema: ${(error as Error).message}`,
          'schema_invalid',
          'config.json_schema',
        );
      }
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
    const named = domain ?? hub.get(command.domain);
    return { schema: named.jsonSchema, prompt: command.request.instructions ?? named.prompt };
  }

  /** Refuses at submission what the webhook sender would refuse at delivery (scheme, private or loopback host). */
  async function checkCallback(url: string | null): Promise<void> {
    if (url === null) return;
    try {
      await checkPublicUrl(url, deps.inputs.fetch.allowPrivate);
    } catch (error) {
      const reason = error instanceof SafeFetchError ? error.message : 'invalid URL';
      throw new BadRequestError(`callback_url refused: ${reason}.`, 'url_not_allowed', 'callback_url');
    }
  }

  /** Stores the input bytes and the record together under the blob's lock, so no delete can slip in between. */
  async function storeWithInput(
    input: ExtractionInput,
    record: (stored: StoredBytes) => Prediction,
  ): Promise<Prediction> {
    const staged = await deps.blobs.stage(Readable.from([input.bytes]), { maxBytes: Number.MAX_SAFE_INTEGER });
    try {
      return await deps.locks.run(staged.stored.sha256, async () => {
        await staged.commit();
        return store.insert(record(staged.stored), [staged.stored]);
      });
    } finally {
      await staged.discard();
    }
  }

  async function loadInput(prediction: Prediction): Promise<ExtractionInput> {
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
    prediction: Prediction,
    runner: SkillRunner,
    agent: NonNullable<Prediction['request']['agent']>,
    hold: SkillRunHold | null,
  ): Promise<Prediction> {
    const running = await claim(prediction, hold);
    if (!running) return (await store.getById(prediction.id)) ?? prediction;
    let finished: Prediction | null;
    let failure: Error | null = null;
    try {
      const input = await loadInput(running);
      const { schema } = schemaFor(running);
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
      finished = await store.transition(running.id, ['running'], 'completed', {
        response: result.response,
        usage: result.usage,
        completedAt: new Date(),
      });
    } catch (error) {
      hold?.release();
      // A shutdown stopped the run: the record stays `running` and the next start runs it again.
      if (error instanceof SkillRunInterrupted) return running;
      failure = error instanceof Error ? error : new Error(String(error));
      finished = await recordFailure(running, error, 'prediction failed on the agent runtime');
    }
    return conclude(finished ?? running, failure);
  }

  /**
   * Moves a pending or enqueued record to running. Null when it was no longer waiting (another worker or a cancel
   * got there first); the hold is given back then, and when the move itself fails.
   */
  async function claim(prediction: Prediction, hold: { release(): void } | null): Promise<Prediction | null> {
    const running = await store
      .transition(prediction.id, ['pending', 'enqueued'], 'running', { attempts: prediction.attempts + 1 })
      .catch((error: unknown) => {
        hold?.release();
        throw error;
      });
    if (!running) hold?.release();
    return running;
  }

  /** Stores a run that threw as failed: an AppError's own message, otherwise a generic one (and the error logged). */
  function recordFailure(running: Prediction, error: unknown, logMessage: string): Promise<Prediction | null> {
    const message = error instanceof AppError ? error.message : 'Internal error while running the prediction.';
    if (!(error instanceof AppError)) logger.error(logMessage, { prediction: running.id, error: String(error) });
    return store.transition(running.id, ['running'], 'failed', {
      response: null,
      usage: { ...EMPTY_USAGE, credits_used: 0, message },
      errorMessage: message,
      completedAt: new Date(),
    });
  }

  /** Announces a finished record (webhooks, waiters), then returns it, or throws the failure that ended it. */
  function conclude(final: Prediction, failure: Error | null): Prediction {
    if (isTerminal(final.status)) deps.onFinished(final);
    if (failure) throw failure;
    return final;
  }

  /** Stores a run its caller cancelled as failed, with nothing billed; not an error worth logging. */
  function recordCancelled(running: Prediction): Promise<Prediction | null> {
    return store.transition(running.id, ['running'], 'failed', {
      response: null,
      usage: { ...EMPTY_USAGE, credits_used: 0, message: CANCELLED_MESSAGE },
      errorMessage: CANCELLED_MESSAGE,
      completedAt: new Date(),
    });
  }

  /**
   * Runs a record that is pending or enqueued; returns the final record. Throws the engine's AppError, or
   * `WorkCancelledError` when `signal` aborted before the work finished.
   */
  async function execute(
    prediction: Prediction,
    hold: ExtractionHold | null,
    onProgress?: (done: number, total: number) => void,
    signal?: CancelSignal,
  ): Promise<Prediction> {
    const running = await claim(prediction, hold);
    if (!running) return (await store.getById(prediction.id)) ?? prediction;
    let finished: Prediction | null;
    let failure: Error | null = null;
    try {
      const input = await loadInput(running);
      const { schema, prompt } = schemaFor(running);
      // The organisation's pages take turns with other organisations' in the shared OCR pool.
      // With a signal, the engines stop starting pages and frames once the caller cancels.
      const output = await runForTenant(
        running.orgId,
        () =>
          engine.run({
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
      // The work is done: debit what it read (the hold is given back on any failure up to here).
      const credits = Math.max(0, Math.round(output.credits));
      if (credits > 0) await hold?.settle(credits, `extraction ${running.model} ${running.id}`);
      else hold?.release();
      hold = null;
      finished = await store.transition(running.id, ['running'], 'completed', {
        response: output.response,
        usage: usageOf(output, notes),
        completedAt: new Date(),
      });
    } catch (error) {
      hold?.release();
      failure = error instanceof Error ? error : new Error(String(error));
      finished =
        error instanceof WorkCancelledError
          ? await recordCancelled(running)
          : await recordFailure(running, error, 'prediction failed');
    }
    return conclude(finished ?? running, failure);
  }

  /** Runs a record on the runtime when its request says so, else on the extraction engine. */
  async function run(
    prediction: Prediction,
    hold: ExtractionHold | null,
    runHold: SkillRunHold | null,
    onProgress?: (done: number, total: number) => void,
    signal?: CancelSignal,
  ): Promise<Prediction> {
    const agent = prediction.request.agent;
    if (!agent) return execute(prediction, hold, onProgress, signal);
    if (!skillRunner) {
      runHold?.release();
      throw new Error(`prediction ${prediction.id} needs the agent runtime, which is not wired`);
    }
    return executeOnRuntime(prediction, skillRunner, agent, runHold);
  }

  return {
    async create(principal, command, options = {}) {
      const model = STRUCTURED_MODEL_ALIASES[command.model] ?? command.model;
      // An agent model is a generate model only for skill requests, which then run on the agent runtime.
      const agentModel = skillRunner !== null && AGENT_MODEL_ID.test(model) && (command.skills?.length ?? 0) > 0;
      if (!engine.models.includes(model) && !agentModel) {
        throw new BadRequestError(
          `Unknown model '${command.model}'; available: ${engine.models.join(', ')}.`,
          null,
          'model',
        );
      }
      await checkCallback(command.callbackUrl);
      const references = command.skills ?? [];
      // With a domain in the request the domain wins (skill-domain.ts): the skills are only recorded.
      const requestDomain = command.domain;
      const resolved = await withSkills(deps.skills, hub, principal, command);
      command = resolved.command;
      schemaFor(command);
      const wantsRuntime = skillRunner !== null && requestDomain === null && callsForRuntime(resolved.skills, model);
      if (agentModel && !wantsRuntime) {
        throw new BadRequestError(
          `Model '${command.model}' is an agent model: it runs generate requests with config.skills and no domain.`,
          null,
          'model',
        );
      }
      const planner = wantsRuntime && skillRunner ? skillRunner.planner(model, resolved.skills) : null;
      const directNote = planner ? directPathNote(planner, model, command.domain) : null;
      if (directNote) command = { ...command, request: { ...command.request, runtimeNote: directNote } };
      const plannerModel = planner && !directNote ? planner.model : null;
      const orgId = await deps.orgIdFor(principal);
      const input = await resolveSingleInput(deps.inputs, principal, command);
      const measure = await engine.validateInput(command.kind, input);
      const id = randomUUID();
      // The hold of its largest cost is taken before anything is stored or read: 402 leaves no record behind. A
      // run on the agent runtime holds an execution's budget; priced extraction holds its credits.
      let runHold: SkillRunHold | null = null;
      let hold: ExtractionHold | null = null;
      if (plannerModel && skillRunner) runHold = await skillRunner.reserve(orgId, plannerModel);
      else if (wallet) hold = await wallet.reserve(orgId, creditBound(measure.maxCredits, command.request.pageIndices));
      let prediction: Prediction;
      try {
        if (plannerModel && skillRunner) {
          const skills = await skillRunner.persist(principal, id, references, resolved.skills);
          command = { ...command, request: { ...command.request, agent: { model: plannerModel, skills } } };
        }
        prediction = await storeWithInput(input, (stored) => ({
          id,
          orgId,
          kind: command.kind,
          model,
          domain: command.domain,
          status: 'pending',
          request: command.request,
          inputs: [{ sha256: stored.sha256, contentType: input.mimeType, filename: input.filename }],
          response: null,
          usage: EMPTY_USAGE,
          errorMessage: null,
          callbackUrl: command.callbackUrl,
          attempts: 0,
          createdAt: new Date(),
          completedAt: null,
        }));
        if (command.request.batch) {
          // The caller gets the record as accepted (`pending`, the spec's default); it is `enqueued` from here on.
          await store.transition(prediction.id, ['pending'], 'enqueued');
        }
      } catch (error) {
        hold?.release();
        runHold?.release();
        throw error;
      }
      if (command.request.batch) {
        if (hold) queuedHolds.set(prediction.id, hold);
        if (runHold) queuedRunHolds.set(prediction.id, runHold);
        deps.enqueue(prediction.id);
        return prediction;
      }
      return run(prediction, hold, runHold, options.onProgress, options.signal);
    },

    async get(principal, id) {
      const found = await store.get(await deps.orgIdFor(principal), id);
      if (!found) throw new NotFoundError('prediction', id);
      return found;
    },

    async list(principal, page) {
      return store.list(await deps.orgIdFor(principal), page);
    },

    async runJob(id) {
      const prediction = await store.getById(id);
      const runHold = queuedRunHolds.get(id) ?? null;
      queuedRunHolds.delete(id);
      if (!prediction || isTerminal(prediction.status)) {
        queuedHolds.get(id)?.release();
        queuedHolds.delete(id);
        runHold?.release();
        return;
      }
      const hold = prediction.request.agent ? null : holdFor(prediction);
      await run(prediction, hold, runHold).catch((error: unknown) => {
        if (!(error instanceof AppError)) throw error;
      });
    },

    async resumeUnfinished() {
      let resumed = 0;
      let failed = 0;
      for (const prediction of await store.unfinished()) {
        if (prediction.attempts >= MAX_ATTEMPTS) {
          const message = `Gave up after ${prediction.attempts} attempts interrupted by restarts.`;
          const done = await store.transition(prediction.id, ['pending', 'enqueued', 'running'], 'failed', {
            usage: { ...EMPTY_USAGE, credits_used: 0, message },
            errorMessage: message,
            completedAt: new Date(),
          });
          if (done) deps.onFinished(done);
          failed += 1;
          continue;
        }
        if (prediction.status === 'running' || prediction.status === 'pending') {
          await store.transition(prediction.id, ['running', 'pending'], 'enqueued');
        }
        deps.enqueue(prediction.id);
        resumed += 1;
      }
      return { resumed, failed };
    },
  };
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
