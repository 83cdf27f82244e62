/**
 * Typed decisions through the gateway: the one service behind the WebSocket decision stream and
 * `POST /v1/compat/decisions`, so both give the same answers, usage and errors.
 *
 * `open` checks a question set once: the model (the local decision engine by default, or an upstream vision
 * model), `steps` (refused with 422, as the spec's rule 4 refuses `reasoning_effort`, by models that do not take
 * it), and where each question is answered — locally when a measure fits, else on an upstream vision model from
 * the models file; with none configured the session is refused with `capability_violation` naming the question.
 * The payer must be able to pay before the session starts. Each decision then counts against the caller's
 * decision budget, runs, and is billed on its own; a keyed caller's frames also count against its key's budget and
 * its organisation's, held a slice of frames at a time (src/services/admin/budget-slices.ts), so a frame the budget
 * cannot cover is refused (402 `key_budget_exceeded` or `org_budget_exceeded`) before it is decided.
 */
import type { Principal } from '../../domain/account';
import { RequestValidationError } from '../../domain/errors';
import type {
  Answer,
  DecisionEngine,
  DecisionQuestion,
  FrameMemory,
  KindDescription,
} from '../../engines/decision/decision.engine';
import type { CancelSignal } from '../../lib/cancel';
import { randomHex } from '../../lib/random-id';
import { microsToDollars, type Biller } from '../../metering/billing';
import { payerOf } from '../../metering/payer';
import { callerKey } from '../../metering/caller-key';
import type { DecisionSettings } from './decision-request';
import { CapabilityViolationError } from '../gateway-errors';
import { RateLimitExceededError } from '../../metering/metering-errors';
import { countTokens } from '../message-inputs';
import type { ModelCatalogue } from '../catalogue/model-catalogue';
import type { CatalogueModel } from '../catalogue/model.types';
import type { RateLimiter } from '../../metering/rate-limiter';
import { askUpstream } from './upstream-decisions';
import type { UpstreamClient } from '../upstream/upstream-client';
import { resolveSingleInput, type InputResolverDeps, type InputSources } from '../../services/inputs/resolve-input';
import type { BudgetSlices } from '../../services/admin/budget-slices';

/** The model id of the local decision engine, the default of every session. */
export const LOCAL_DECISION_MODEL = 'prism-decide-1';

/** Prompt tokens an image counts for, as in chat completions. */
const IMAGE_TOKENS = 85;
const FREE = { prompt: 0, completion: 0 };
/** Frames a budget slice holds at once: one settlement per this many frames at most. */
const FRAMES_PER_SLICE = 64;
/** Completion tokens an upstream frame is assumed to use per question, before one has been priced. */
const ANSWER_TOKENS = 16;

/** Who asks, and who pays. */
export interface DecisionCaller {
  principal: Principal;
  /** `X-Prism-Fingerprint` of guests, for the daily guest cap. */
  fingerprint: string | null;
}

/** Usage of one decision, in the chat completions' shape; `cost` is dollars billed. */
export interface DecisionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost: number;
}

export interface DecisionOutcome {
  answers: Record<string, Answer>;
  usage: DecisionUsage;
}

/** Where one question is answered. */
export interface QuestionRoute {
  id: string;
  route: 'local' | 'upstream';
  /** The local kind; null for upstream questions. */
  kind: string | null;
}

export interface DecisionSession {
  id: string;
  model: string;
  /** The upstream vision model questions go to, if any. */
  upstreamModel: string | null;
  routes: QuestionRoute[];
  /**
   * Answer the questions about one frame (JPEG or PNG); `signal` aborts an upstream call (the client left).
   * @throws AppError (invalid_media, 429, 402, upstream errors).
   */
  decide(frame: Buffer, signal?: CancelSignal): Promise<DecisionOutcome>;
  /** Settles what the session's frames spent of the key's and organisation's budgets now (else when idle). */
  settleBudgets(): Promise<void>;
}

export interface DecisionsServiceDeps {
  engine: DecisionEngine;
  catalogue: ModelCatalogue;
  upstream: UpstreamClient;
  biller: Biller;
  /** The per-decision budget (its own windows, keyed like the gateway's). */
  limiter: RateLimiter;
  /** The upstream vision model for questions no measure answers; default the first one the catalogue lists. */
  upstreamModel?: string | undefined;
  /** How an HTTP call's image (data URL, base64, URL or file id) becomes bytes. */
  inputs: InputResolverDeps;
  /** Keys' and organisations' budgets (the operator's API), held a slice of frames at a time. */
  budgets?: BudgetSlices;
}

export interface DecisionsService {
  /** The local engine's kinds of question and example prompts. */
  kinds(): readonly KindDescription[];
  /** Validate a question set and start a session. @throws AppError 404/503 model, 400, 402, 422. */
  open(caller: DecisionCaller, settings: DecisionSettings): Promise<DecisionSession>;
  /** One decision without a stream: open, read the one image, decide. */
  decideOnce(
    caller: DecisionCaller,
    settings: DecisionSettings,
    image: InputSources,
  ): Promise<{ session: DecisionSession; outcome: DecisionOutcome; latencyMs: number }>;
}

const isVisionUpstream = (m: CatalogueModel): boolean =>
  m.mode === 'chat' && m.engine.kind === 'upstream' && m.capabilities.supportedInputTypes.includes('image');

function visionUpstream({ catalogue, upstreamModel }: DecisionsServiceDeps): CatalogueModel | null {
  if (upstreamModel) return catalogue.resolveServing(upstreamModel);
  return catalogue.list('chat').find((m) => isVisionUpstream(m) && m.serving) ?? null;
}

function refuseSteps(modelId: string, steps: number): RequestValidationError {
  return new RequestValidationError([
    {
      type: 'extra_forbidden',
      loc: ['body', 'steps'],
      msg: `The model '${modelId}' does not take steps`,
      input: steps,
    },
  ]);
}

/**
 * Where each question is answered: on the local engine's measures (the rest on the upstream vision model), or
 * all on the upstream model the session names. @throws 422 `steps` where no steps are taken, capability_violation.
 */
function planQuestions(
  deps: DecisionsServiceDeps,
  modelId: string,
  questions: DecisionQuestion[],
  steps: number | undefined,
): {
  upstream: CatalogueModel | null;
  local: ReturnType<DecisionEngine['plan']>['local'];
  remote: DecisionQuestion[];
} {
  if (modelId === LOCAL_DECISION_MODEL) {
    // The local engine measures; it has no denoising or sampling steps to set.
    if (steps !== undefined) throw refuseSteps(modelId, steps);
    const plan = deps.engine.plan(questions);
    if (plan.unanswerable.length === 0) return { upstream: null, local: plan.local, remote: [] };
    const upstream = visionUpstream(deps);
    const first = plan.unanswerable[0] as DecisionQuestion;
    if (!upstream) {
      throw new CapabilityViolationError(
        `No local measure answers question '${first.id}' ("${first.question}") as ${first.type}, and no upstream vision model is configured; see GET /v1/compat/decisions for what is answered locally`,
        `questions.${first.id}`,
      );
    }
    return { upstream, local: plan.local, remote: plan.unanswerable };
  }
  const upstream = deps.catalogue.resolveServing(modelId);
  if (!isVisionUpstream(upstream)) {
    throw new CapabilityViolationError(
      `'${upstream.id}' cannot answer decisions: use ${LOCAL_DECISION_MODEL} or an upstream model that reads images`,
      'model',
    );
  }
  if (steps !== undefined && !upstream.supportedParameters.includes('steps')) throw refuseSteps(upstream.id, steps);
  return { upstream, local: [], remote: questions };
}

export function createDecisionsService(deps: DecisionsServiceDeps): DecisionsService {
  const { engine, catalogue, biller } = deps;

  const service: DecisionsService = {
    kinds: () => engine.kinds,

    async decideOnce(caller, settings, image) {
      const session = await service.open(caller, settings);
      const input = await resolveSingleInput(deps.inputs, caller.principal, image);
      const started = performance.now();
      const outcome = await session.decide(input.bytes).finally(() => session.settleBudgets());
      return { session, outcome, latencyMs: Math.round((performance.now() - started) * 100) / 100 };
    },

    async open(caller, settings) {
      const questions = settings.questions as DecisionQuestion[];
      const modelId = settings.model ?? LOCAL_DECISION_MODEL;
      const { upstream, local, remote } = planQuestions(deps, modelId, questions, settings.steps);
      const payer = payerOf(caller.principal, { fingerprint: caller.fingerprint, namingKey: false });
      await biller.authorize(payer);

      const target = upstream ? catalogue.upstreamTarget(upstream) : null;
      const memory: FrameMemory = { previous: null };
      const questionTokens = countTokens(questions.map((q) => q.question).join('\n'));
      const routes: QuestionRoute[] = questions.map((q) => {
        const planned = local.find((p) => p.question.id === q.id);
        return { id: q.id, route: planned ? 'local' : 'upstream', kind: planned?.kind ?? null };
      });
      const sessionId = `dsess_${randomHex(12)}`;
      const key = `decision:${callerKey(caller.principal)}`;
      const pricing = upstream && remote.length > 0 ? upstream.pricing : FREE;
      // What the next frame is assumed to cost, for the budget slice: the last frame's cost once one was priced.
      let frameMicros = biller.price({
        pricing,
        usage: { promptTokens: IMAGE_TOKENS + questionTokens, completionTokens: ANSWER_TOKENS * remote.length },
        reason: 'estimate',
      }).costMicros;
      const slice = deps.budgets?.open(payerOf(caller.principal), frameMicros * FRAMES_PER_SLICE) ?? null;

      return {
        id: sessionId,
        model: modelId,
        upstreamModel: upstream?.id ?? null,
        routes,
        async decide(frame, signal) {
          const budget = await deps.limiter.check(key);
          if (!budget.allowed) {
            throw new RateLimitExceededError({
              window: budget.label,
              retryAfterS: budget.retryAfterS,
              tier: caller.principal.kind === 'user' ? caller.principal.tier : 'anonymous',
              anonymous: caller.principal.kind === 'anonymous',
            });
          }
          await biller.authorize(payer);
          if (slice) await slice.reserve(frameMicros);
          let spent = 0;
          try {
            const outcome = await decideFrame(frame, signal);
            spent = outcome.costMicros;
            frameMicros = Math.max(frameMicros, spent);
            return outcome.decided;
          } finally {
            slice?.spend(spent, modelId);
          }
        },
        settleBudgets: () => slice?.flush() ?? Promise.resolve(),
      };

      async function decideFrame(
        frame: Buffer,
        signal: CancelSignal | undefined,
      ): Promise<{ decided: DecisionOutcome; costMicros: number }> {
        // Decoding in the engine also validates the frame, even when every question goes upstream.
        const answers = await engine.decide(frame, local, memory);
        let promptTokens = IMAGE_TOKENS + questionTokens;
        let completionTokens = countTokens(JSON.stringify(answers));
        if (upstream && target && remote.length > 0) {
          const asked = await askUpstream(deps.upstream, target, upstream, {
            frame,
            questions: remote,
            steps: settings.steps,
            ...(signal ? { signal } : {}),
          });
          // `answers` has no prototype (the engine's): assigning a `__proto__` key makes an own property.
          for (const [id, answer] of Object.entries(asked.answers)) answers[id] = answer;
          promptTokens = asked.promptTokens || promptTokens;
          completionTokens = asked.completionTokens || countTokens(JSON.stringify(answers));
        }
        const ordered = Object.fromEntries(
          questions.map((q) => [q.id, Object.hasOwn(answers, q.id) ? (answers[q.id] ?? null) : null]),
        );
        const billed = await biller.charge(payer, {
          pricing,
          usage: { promptTokens, completionTokens },
          reason: `decisions ${modelId} ${sessionId}`,
        });
        const decided = {
          answers: ordered,
          usage: {
            prompt_tokens: promptTokens,
            completion_tokens: completionTokens,
            total_tokens: promptTokens + completionTokens,
            cost: microsToDollars(billed.costMicros),
          },
        };
        return { decided, costMicros: billed.costMicros };
      }
    },
  };
  return service;
}
