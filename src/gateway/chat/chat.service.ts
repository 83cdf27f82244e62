/**
 * Chat completions through the gateway: resolve the model, check its capabilities against what the caller sent,
 * authorise the payer, take a queue slot, then run the call on an upstream server (streamed or not, under its
 * deadlines, cancelled with the client) or on the embedded engines, and bill the tokens used. A stream is returned
 * as an async iterable of chunk batches (an upstream's chunks as each network read brought them), whose first
 * batch the route reads before writing any byte (so a first-token timeout is still a JSON 504), and whose end
 * bills the call.
 */
import { runForTenant } from '../../lib/work-tenant';
import type { Principal } from '../../domain/account';
import { defaultPredictionRequest, type PredictionRequest } from '../../domain/prediction';
import type { Logger } from '../../lib/logger';
import { randomHex } from '../../lib/random-id';
import type { ExtractionEngine } from '../../engines/extraction-engine';
import { resolveSingleInput, type InputResolverDeps } from '../../services/inputs/resolve-input';
import { CancelController, WorkCancelledError, type CancelSignal } from '../../lib/cancel';
import { extend } from '../../lib/extend';
import { RawJson } from '../../lib/raw-json';
import {
  maxCallMicros,
  microsToDollars,
  type Biller,
  type ChargeResult,
  type Hold,
  type Payer,
} from '../../metering/billing';
import { checkChatCapabilities } from '../capabilities';
import { CapabilityViolationError, DeadlineExceededError } from '../gateway-errors';
import { ClientDisconnectedError } from '../../domain/errors';
import { answerLocally, effectiveMethod } from './local-chat';
import { readMethodParams } from './method-params';
import { countTokens, mediaParts, textOf, tokensForChars, type ChatMessage } from '../message-inputs';
import type { ModelCatalogue } from '../catalogue/model-catalogue';
import type { CatalogueModel } from '../catalogue/model.types';
import type { ReleaseSlot, RequestQueue } from '../../metering/request-queue';
import type { UpstreamClient, UpstreamJson, UpstreamRelayStream } from '../upstream/upstream-client';
import { carriesUsage, chunkId, contentChars, relabelModel, withoutNullUsage } from '../upstream/relay-text';
import type { AgentChat } from '../../services/chats/agent-chat';
import { createAgentCompletions, isAgentModel } from '../agents/agent-completions';

type Json = Record<string, unknown>;

/** Parameters that only Prism reads; they are not forwarded to upstream servers. */
const PRISM_ONLY = [
  'method',
  'method_params',
  'video_fps',
  'video_max_frames',
  'document_dpi',
  'session_id',
  'skills',
  'toolsets',
  'models',
  'preview',
  'public',
  'session_token',
];

export const DEFAULT_CHAT_MODEL = 'prism-orion-1';

export interface ChatContext {
  requestId: string;
  /** Aborts when the client disconnects. */
  signal: CancelSignal;
  /** Browser fingerprint header of guests (`X-Prism-Fingerprint`), for the guest spend cap. */
  fingerprint: string | null;
  payerOrgId: string | null;
  /** The `X-Session-Id` header (agent models: the chat thread to continue). */
  sessionHeader?: string | null;
}

/**
 * A reply: a JSON body, or SSE chunks in non-empty batches (each batch leaves in one socket write), and headers to
 * send with it (agent models name their chat thread).
 */
export type ChatOutcome = (
  { stream: false; body: Json } | { stream: true; batches: AsyncIterable<ReadonlyArray<Json | RawJson>> }
) & {
  headers?: Record<string, string>;
};

export interface ChatServiceDeps {
  catalogue: ModelCatalogue;
  upstream: UpstreamClient;
  biller: Biller;
  queue: RequestQueue;
  extraction: ExtractionEngine;
  inputs: InputResolverDeps;
  logger: Logger;
  /** Runs the agent models' turns on the agent runtime; without it they answer like any local or upstream model. */
  agentChat?: AgentChat | null;
}

export interface ChatService {
  complete(principal: Principal, body: Json, context: ChatContext): Promise<ChatOutcome>;
}

/** Completion tokens a call is assumed able to spend when it sets no `max_tokens`/`max_completion_tokens`. */
export const DEFAULT_COMPLETION_BUDGET = 4096;
/** Prompt tokens one image, video or document part is assumed to add when reserving. */
const MEDIA_PART_TOKENS = 1024;

/** The most the call can cost, reserved before any work (see billing.ts). */
function reservationMicros(model: CatalogueModel, body: Json, minimumMicros?: number): number {
  const messages = Array.isArray(body.messages) ? (body.messages as ChatMessage[]) : [];
  const prompt = countTokens(textOf(messages)) + mediaParts(messages).length * MEDIA_PART_TOKENS;
  const budget = [body.max_completion_tokens, body.max_tokens].find(
    (v): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0,
  );
  const reasoning = REASONING_TOKENS[String(body.reasoning_effort)] ?? 0;
  const completion = Math.min(budget ?? DEFAULT_COMPLETION_BUDGET, 10_000_000) + reasoning;
  return maxCallMicros(model.pricing, prompt, completion, minimumMicros === undefined ? {} : { minimumMicros });
}

const completionId = (): string => `chatcmpl-${randomHex(12)}`;

/** Chat rule 4: `none`, `minimal` and `low` spend 0, 32 and 64 reasoning tokens before the answer. */
export const REASONING_TOKENS: Readonly<Record<string, number>> = { none: 0, minimal: 32, low: 64 };

function usageBody(promptTokens: number, completionTokens: number, charge: ChargeResult | null, reasoning = 0): Json {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    completion_tokens_details: { reasoning_tokens: reasoning },
    ...(charge ? { cost: microsToDollars(charge.costMicros), credits_used: microsToDollars(charge.costMicros) } : {}),
  };
}

/** Characters of a parsed chunk's delta content, over its choices. */
function deltaChars(chunk: Json): number {
  let chars = 0;
  for (const choice of Array.isArray(chunk.choices) ? (chunk.choices as Json[]) : []) {
    const delta = choice.delta as Json | undefined;
    if (typeof delta?.content === 'string') chars += delta.content.length;
  }
  return chars;
}

function requestOptions(body: Json): PredictionRequest {
  const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return defaultPredictionRequest({
    documentDpi: num(body.document_dpi),
    videoFps: num(body.video_fps),
    videoMaxFrames: num(body.video_max_frames),
  });
}

/** The JSON schema of `response_format` in the OpenAI shape (`json_schema.schema`) or Fireworks' (`schema`). */
function responseSchema(format: unknown): { schema: Json | null; jsonObject: boolean } {
  if (!format || typeof format !== 'object') return { schema: null, jsonObject: false };
  const f = format as Json;
  if (f.type === 'json_object') return { schema: null, jsonObject: true };
  if (f.type !== 'json_schema') return { schema: null, jsonObject: false };
  const nested = (f.json_schema as Json | undefined)?.schema ?? f.schema;
  return { schema: nested && typeof nested === 'object' ? (nested as Json) : null, jsonObject: true };
}

/** Rejects with the model's 504 when `work` outlives its total timeout; `onExpired` then cancels the work. */
async function withDeadline<T>(
  work: Promise<T>,
  model: CatalogueModel,
  provider: string,
  onExpired?: () => void,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new DeadlineExceededError(provider, model.totalTimeoutS));
      onExpired?.();
    }, model.totalTimeoutS * 1000);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

export function createChatService(deps: ChatServiceDeps): ChatService {
  const { catalogue, biller, queue } = deps;
  const agents = deps.agentChat
    ? createAgentCompletions({ catalogue, biller, queue, agentChat: deps.agentChat })
    : null;

  const payerOf = (principal: Principal, context: ChatContext): Payer =>
    principal.kind === 'user' && context.payerOrgId
      ? { kind: 'org', orgId: context.payerOrgId }
      : {
          kind: 'guest',
          clientIp: principal.kind === 'anonymous' ? principal.clientIp : 'unknown',
          fingerprint: context.fingerprint,
        };

  async function charge(hold: Hold, model: CatalogueModel, prompt: number, completion: number, requestId: string) {
    return hold.settle({
      pricing: model.pricing,
      usage: { promptTokens: prompt, completionTokens: completion },
      reason: `chat.completions ${model.id} ${requestId}`,
    });
  }

  async function local(
    principal: Principal,
    model: CatalogueModel,
    body: Json,
    context: ChatContext,
    hold: Hold,
    cancel: CancelController,
  ) {
    const messages = body.messages as ChatMessage[];
    const text = textOf(messages);
    const [media] = mediaParts(messages);
    const input = media ? await resolveSingleInput(deps.inputs, principal, media.sources, media.path) : null;
    const { schema, jsonObject } = responseSchema(body.response_format);
    const method = typeof body.method === 'string' ? body.method : null;
    const methodParams = readMethodParams(
      effectiveMethod(model.id, method, schema !== null),
      body.method_params,
      input?.family ?? null,
    );
    const answer = await withDeadline(
      answerLocally(deps.extraction, {
        modelId: model.id,
        method,
        methodParams,
        input,
        text,
        schema,
        jsonObject,
        request: { ...requestOptions(body), pageIndices: methodParams.pageIndices },
      }),
      model,
      'prism',
      () => cancel.abort(),
    );
    const promptTokens = countTokens(text) + (input ? 85 : 0);
    // The local engines do not reason; the budget the caller chose is still accounted as the spec defines it.
    const reasoning = REASONING_TOKENS[String(body.reasoning_effort)] ?? 0;
    const completionTokens = countTokens(answer.content) + reasoning;
    const billed = await charge(hold, model, promptTokens, completionTokens, context.requestId);
    return { content: answer.content, usage: usageBody(promptTokens, completionTokens, billed, reasoning) };
  }

  async function* localStream(
    id: string,
    model: CatalogueModel,
    created: number,
    produce: Promise<{ content: string; usage: Json }>,
    includeUsage: boolean,
  ) {
    const { content, usage } = await produce;
    const base = { id, object: 'chat.completion.chunk', created, model: model.id };
    // The engine answers whole: its deltas (one per line) are all ready at once, so they go as one batch.
    const chunks: Json[] = [
      { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
    ];
    for (const piece of content.match(/[^\n]*\n?/g)?.filter(Boolean) ?? []) {
      chunks.push({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
    }
    chunks.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    if (includeUsage) chunks.push({ ...base, choices: [], usage });
    yield chunks;
  }

  function upstreamBody(body: Json, target: string): UpstreamJson {
    const forwarded: Json = extend(body, { model: target });
    for (const key of PRISM_ONLY) delete forwarded[key];
    delete forwarded.stream_options;
    return forwarded;
  }

  /**
   * Relays an upstream stream as text (RawJson): each chunk's `model` is relabelled in the text and its usage and
   * content are read from it, so a chunk is neither parsed nor serialised again. Only the chunk carrying usage is
   * parsed (it is held back and sent after billing, with the billed usage), and a chunk the text cannot be
   * relabelled in (no string `model`) is parsed and relabelled as an object.
   */
  async function* upstreamStream(
    model: CatalogueModel,
    batches: UpstreamRelayStream,
    hold: Hold,
    context: ChatContext,
    includeUsage: boolean,
    promptEstimate: number,
    release: ReleaseSlot,
  ) {
    const modelLiteral = JSON.stringify(model.id);
    let usage: Json | null = null;
    let completionChars = 0;
    let streamId: string | null = null;
    try {
      for await (const batch of batches) {
        const out: (Json | RawJson)[] = [];
        for (const raw of batch) {
          let text = raw.text;
          streamId ??= chunkId(text);
          if (carriesUsage(text)) {
            const chunk = JSON.parse(text) as Json;
            usage = chunk.usage as Json;
            completionChars += deltaChars(chunk);
            if (!Array.isArray(chunk.choices) || chunk.choices.length === 0) continue; // re-emitted after billing
            chunk.model = model.id;
            if (!includeUsage) delete chunk.usage;
            out.push(chunk);
            continue;
          }
          completionChars += contentChars(text);
          if (!includeUsage) text = withoutNullUsage(text);
          const relabelled = relabelModel(text, modelLiteral);
          if (relabelled !== null) {
            out.push(new RawJson(relabelled));
          } else {
            const chunk = JSON.parse(text) as Json;
            chunk.model = model.id;
            out.push(chunk);
          }
        }
        if (out.length > 0) yield out;
      }
    } catch (error) {
      hold.release(); // a stream that failed or was left is not billed
      throw error;
    } finally {
      // The queue slot is given back however the stream ends (finished, failed, or the client left).
      release();
    }
    const prompt = typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens : promptEstimate;
    const completion =
      typeof usage?.completion_tokens === 'number' ? usage.completion_tokens : tokensForChars(completionChars);
    const billed = await charge(hold, model, prompt, completion, context.requestId);
    if (includeUsage) {
      yield [
        {
          id: streamId ?? completionId(),
          object: 'chat.completion.chunk',
          created: Math.floor(Date.now() / 1000),
          model: model.id,
          choices: [],
          usage: usageBody(prompt, completion, billed),
        },
      ];
    }
  }

  return {
    async complete(principal, body, context) {
      const requested = typeof body.model === 'string' ? body.model : DEFAULT_CHAT_MODEL;
      if (agents && isAgentModel(requested)) {
        return agents.complete(principal, requested, body, {
          requestId: context.requestId,
          signal: context.signal,
          payer: payerOf(principal, context),
          sessionHeader: context.sessionHeader ?? null,
        });
      }
      const model = catalogue.resolveServing(requested);
      checkChatCapabilities(model, body);
      const payer = payerOf(principal, context);
      if (body.method_params != null && catalogue.upstreamTarget(model)) {
        // Upstream servers are not sent Prism's own parameters; refused rather than silently dropped.
        throw new CapabilityViolationError(
          `'${model.id}' runs on an upstream server; method_params is read by the embedded methods only`,
          'method_params',
        );
      }
      const hold = await biller.reserve(payer, reservationMicros(model, body));
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
    const stream = body.stream === true;
    const includeUsage = (body.stream_options as Json | undefined)?.include_usage === true;
    const target = catalogue.upstreamTarget(model);

    if (!target) {
      const id = completionId();
      const created = Math.floor(Date.now() / 1000);
      // Embedded-engine work takes turns per organisation (or guest address) in the shared OCR pool.
      const tenant = principal.kind === 'user' ? principal.orgId : `guest:${principal.clientIp}`;
      // Nothing is stored for a chat call: once the client leaves or the deadline answers, nobody wants the rest,
      // so the engines stop starting pages and frames (pages already on an OCR worker finish).
      const cancel = new CancelController();
      const unfollow = cancel.follow(context.signal);
      const produce = queue
        .run(
          'local',
          () => runForTenant(tenant, () => local(principal, model, body, context, hold, cancel), cancel.signal),
          context.signal,
        )
        .catch((error: unknown) => {
          // Stopped because the client left: the same 499 as a client that leaves while queued.
          throw error instanceof WorkCancelledError && context.signal.aborted ? new ClientDisconnectedError() : error;
        })
        .finally(unfollow);
      produce.catch(() => hold.release());
      if (stream) return { stream: true, batches: localStream(id, model, created, produce, includeUsage) };
      const { content, usage } = await produce;
      return {
        stream: false,
        body: {
          id,
          object: 'chat.completion',
          created,
          model: model.id,
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }],
          usage,
        },
      };
    }

    const forwarded = upstreamBody(body, target.model);
    const promptEstimate = countTokens(textOf(body.messages as ChatMessage[]));
    if (stream) {
      const release = await queue.acquire('upstream', context.signal);
      try {
        const batches = await deps.upstream.relayChat(target, forwarded, {
          signal: context.signal,
          includeUsage: true,
        });
        return {
          stream: true,
          batches: upstreamStream(model, batches, hold, context, includeUsage, promptEstimate, release),
        };
      } catch (error) {
        release();
        throw error;
      }
    }
    const reply = await queue.run(
      'upstream',
      () => deps.upstream.chat(target, forwarded, { signal: context.signal }),
      context.signal,
    );
    const usage = (reply.usage ?? {}) as Json;
    const prompt = typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : promptEstimate;
    const completion = typeof usage.completion_tokens === 'number' ? usage.completion_tokens : 0;
    const billed = await charge(hold, model, prompt, completion, context.requestId);
    return {
      stream: false,
      body: extend(reply, { model: model.id, usage: extend(usage, usageBody(prompt, completion, billed)) }),
    };
  }
}
