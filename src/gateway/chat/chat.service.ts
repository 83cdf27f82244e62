/**
 * Chat completions through the gateway: resolve the model, check its capabilities against what the caller sent,
 * authorise the payer, take a queue slot, then run the call on an upstream server (streamed or not, under its
 * deadlines, cancelled with the client) or on the embedded engines, and bill the tokens used. A stream is returned
 * as an async iterable of chunk batches (an upstream's chunks as each network read brought them), whose first
 * batch the route reads before writing any byte (so a first-token timeout is still a JSON 504), and whose end
 * bills the call.
 *
 * Composed here from its paths: local-completion.ts (the embedded engines), upstream-completion.ts (an upstream
 * server) and the agent models' completions (src/gateway/agents/), over what they share (chat-usage.ts); the
 * contract is chat.types.ts.
 */
import type { Principal } from '../../domain/account';
import { maxCallMicros, type Hold } from '../../metering/billing';
import { payerOf } from '../../metering/payer';
import { createAgentCompletions } from '../agents/agent-completions';
import { isAgentModel } from '../agents/agent-planner';
import { checkChatCapabilities } from '../capabilities';
import type { CatalogueModel } from '../catalogue/model.types';
import { CapabilityViolationError } from '../gateway-errors';
import { checkKeyModelOf } from '../../services/admin/key-model-check';
import { countTokens, mediaParts, textOf, type ChatMessage } from '../message-inputs';
import { DEFAULT_COMPLETION_BUDGET, REASONING_TOKENS } from './chat-usage';
import type { ChatContext, ChatOutcome, ChatService, ChatServiceDeps, Json } from './chat.types';
import { createLocalCompletion } from './local-completion';
import { strictResponseSchema } from './strict-reply';
import { createUpstreamCompletion } from './upstream-completion';

export const DEFAULT_CHAT_MODEL = 'prism-orion-1';

/** Prompt tokens one image, video or document part is assumed to add when reserving. */
const MEDIA_PART_TOKENS = 1024;

/**
 * The most the call can cost, reserved before any work (see billing.ts). A strict `json_schema` call on an upstream
 * may take two calls (strict-reply.ts), the second sent the first's messages and reply: both are reserved.
 */
function reservationMicros(model: CatalogueModel, body: Json, twoCalls: boolean, minimumMicros?: number): number {
  const messages = Array.isArray(body.messages) ? (body.messages as ChatMessage[]) : [];
  const prompt = countTokens(textOf(messages)) + mediaParts(messages).length * MEDIA_PART_TOKENS;
  const budget = [body.max_completion_tokens, body.max_tokens].find(
    (v): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0,
  );
  const reasoning = REASONING_TOKENS[String(body.reasoning_effort)] ?? 0;
  const completion = Math.min(budget ?? DEFAULT_COMPLETION_BUDGET, 10_000_000) + reasoning;
  const options = minimumMicros === undefined ? {} : { minimumMicros };
  if (twoCalls) return maxCallMicros(model.pricing, 2 * prompt + completion, 2 * completion, options);
  return maxCallMicros(model.pricing, prompt, completion, options);
}

export function createChatService(deps: ChatServiceDeps): ChatService {
  const { catalogue, biller, queue } = deps;
  const agents = deps.agentChat
    ? createAgentCompletions({ catalogue, biller, queue, agentChat: deps.agentChat })
    : null;
  const local = createLocalCompletion(deps);
  const upstream = createUpstreamCompletion(deps);

  return {
    async complete(principal, body, context) {
      const requested = typeof body.model === 'string' ? body.model : DEFAULT_CHAT_MODEL;
      // A key with an allow-list of models (src/services/admin) is refused others before anything is resolved.
      await checkKeyModelOf(deps.checkKeyModel, principal, requested);
      if (agents && isAgentModel(requested)) {
        return agents.complete(principal, requested, body, {
          requestId: context.requestId,
          signal: context.signal,
          payer: payerOf(principal, { fingerprint: context.fingerprint }),
          sessionHeader: context.sessionHeader ?? null,
        });
      }
      const model = catalogue.resolveServing(requested);
      checkChatCapabilities(model, body);
      const payer = payerOf(principal, { fingerprint: context.fingerprint });
      if (body.method_params != null && catalogue.upstreamTarget(model)) {
        // Upstream servers are not sent Prism's own parameters; refused rather than silently dropped.
        throw new CapabilityViolationError(
          `'${model.id}' runs on an upstream server; method_params is read by the embedded methods only`,
          'method_params',
        );
      }
      const twoCalls = strictResponseSchema(body) !== null && catalogue.upstreamTarget(model) !== null;
      const hold = await biller.reserve(payer, reservationMicros(model, body, twoCalls));
      try {
        return await run(principal, model, body, context, hold);
      } catch (error) {
        hold.release();
        throw error;
      }
    },
  };

  async function run(
    principal: Principal,
    model: CatalogueModel,
    body: Json,
    context: ChatContext,
    hold: Hold,
  ): Promise<ChatOutcome> {
    const target = catalogue.upstreamTarget(model);
    return target ? upstream(model, target, body, context, hold) : local(principal, model, body, context, hold);
  }
}
