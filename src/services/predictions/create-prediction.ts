/**
 * `create`: accept a generate request. Resolves the model (a structured model, or an agent model for skill
 * requests), the callback URL, the skills and the schema, reads and measures the input, holds the largest cost
 * (credits, or an execution's budget on the agent runtime), stores the input with the record, then runs it now or
 * hands it to the job queue (`batch`).
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { BadRequestError } from '../../domain/errors';
import { EMPTY_USAGE, STRUCTURED_MODEL_ALIASES, type Prediction } from '../../domain/prediction';
import { checkPublicUrl, SafeFetchError } from '../../lib/safe-fetch';
import type { StoredBytes } from '../../stores/types';
import type { ExtractionInput } from '../../engines/extraction-engine';
import { resolveSingleInput } from '../inputs/resolve-input';
import { creditBound, type ExtractionHold } from './extraction-billing';
import type { PredictionRunner, QueuedHolds } from './prediction-run';
import type { PredictionsService, PredictionsServiceDeps } from './predictions.types';
import { withSkills } from './skill-domain';
import { checkKeyModelOf } from '../admin/key-model-check';
import { AGENT_MODEL_ID, callsForRuntime, directPathNote, type SkillRunHold } from './skill-runner';

export function createPredictionCreate(
  deps: PredictionsServiceDeps,
  runner: PredictionRunner,
  held: QueuedHolds,
): PredictionsService['create'] {
  const { store, hub, engine } = deps;
  const wallet = deps.wallet ?? null;
  const skillRunner = deps.skillRunner ?? null;
  const { queuedHolds, queuedRunHolds } = held;
  const { run, schemaFor } = runner;

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

  return async (principal, command, options = {}) => {
    // A key with an allow-list of models (docs/admin.md) is refused others before anything is read or held.
    await checkKeyModelOf(deps.checkKeyModel, principal, command.model);
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
    const measure = await engine.validateInput(command.kind, input, command.domain);
    const id = randomUUID();
    // The hold of its largest cost is taken before anything is stored or read: 402 leaves no record behind. A
    // run on the agent runtime holds an execution's budget; priced extraction holds its credits.
    let runHold: SkillRunHold | null = null;
    let hold: ExtractionHold | null = null;
    const keyId = principal.kind === 'user' ? principal.keyId : null;
    if (plannerModel && skillRunner) runHold = await skillRunner.reserve(orgId, plannerModel, keyId);
    else if (wallet) {
      const credits = creditBound(measure.maxCredits, command.request.pageIndices);
      hold = await wallet.reserve(orgId, credits, measure.speechSeconds ?? 0, keyId);
    }
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
  };
}
