/**
 * A chat call on an upstream server: forward the body without Prism's own parameters, run it in the `upstream` lane
 * of the request queue, relay a stream as text (relabelled, usage read from it) or the reply as JSON, and bill the
 * tokens the upstream reports (or an estimate when it reports none).
 *
 * A strict `json_schema` response format (strict-reply.ts) takes its own path: the reply is fetched whole (also
 * when the caller streams), checked against the schema, asked for once more with the problems when it fails, and
 * answered 502 `upstream_schema_violation` when the second reply fails too; a valid reply is billed for the tokens
 * of every call made for it, a 502 for none.
 */
import { extend } from '../../lib/extend';
import { RawJson } from '../../lib/raw-json';
import type { Hold } from '../../metering/billing';
import type { ReleaseSlot } from '../../metering/request-queue';
import type { CatalogueModel, UpstreamTarget } from '../catalogue/model.types';
import { countTokens, textOf, tokensForChars, type ChatMessage } from '../message-inputs';
import type { UpstreamJson, UpstreamRelayStream } from '../upstream/upstream-client';
import { carriesUsage, chunkId, contentChars, relabelModel, withoutNullUsage } from '../upstream/relay-text';
import { charge, completionId, usageBody } from './chat-usage';
import { recordModelUsage, withModelCallSpan } from '../upstream/genai-span';
import type { ChatContext, ChatOutcome, ChatServiceDeps, Json } from './chat.types';
import { UpstreamSchemaViolationError } from '../gateway-errors';
import { judgeReply, retryBody, strictResponseSchema } from './strict-reply';

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
  'multitask_strategy',
];

/** Answers one chat call on the upstream server `target`; the hold is given back when it fails. */
export type UpstreamCompletion = (
  model: CatalogueModel,
  target: UpstreamTarget,
  body: Json,
  context: ChatContext,
  hold: Hold,
) => Promise<ChatOutcome>;

/** What an upstream chat call needs from the chat service: the upstream client and the request queue. */
type UpstreamDeps = Pick<ChatServiceDeps, 'upstream' | 'queue'>;

export function createUpstreamCompletion(deps: UpstreamDeps): UpstreamCompletion {
  const { queue } = deps;

  return async (model, target, body, context, hold) => {
    const stream = body.stream === true;
    const includeUsage = (body.stream_options as Json | undefined)?.include_usage === true;
    const forwarded = upstreamBody(body, target.model);
    const promptEstimate = countTokens(textOf(body.messages as ChatMessage[]));
    const schema = strictResponseSchema(body);
    if (schema) {
      return strictCompletion(deps, model, target, forwarded, schema, context, hold, { stream, includeUsage });
    }
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
    return withModelCallSpan(model.id, target, async (span) => {
      const reply = await queue.run(
        'upstream',
        () => deps.upstream.chat(target, forwarded, { signal: context.signal }),
        context.signal,
      );
      const usage = (reply.usage ?? {}) as Json;
      const prompt = typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : promptEstimate;
      const completion = typeof usage.completion_tokens === 'number' ? usage.completion_tokens : 0;
      const billed = await charge(hold, model, prompt, completion, context.requestId);
      recordModelUsage(span, prompt, completion, billed.costMicros / 1e6);
      return {
        stream: false as const,
        body: extend(reply, { model: model.id, usage: extend(usage, usageBody(prompt, completion, billed)) }),
      };
    });
  };
}

/** The body forwarded upstream: Prism's own parameters taken out, the upstream's model name in. */
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

/**
 * A strict `json_schema` call: up to two upstream calls, the second carrying the first reply's problems; the
 * valid reply is billed for both calls' tokens. A streaming caller gets the checked reply as chunks once it is
 * whole. @throws UpstreamSchemaViolationError when neither reply is valid (the caller gives the hold back:
 * nothing is billed).
 */
async function strictCompletion(
  deps: UpstreamDeps,
  model: CatalogueModel,
  target: UpstreamTarget,
  forwarded: UpstreamJson,
  schema: Json,
  context: ChatContext,
  hold: Hold,
  delivery: StrictDelivery,
): Promise<ChatOutcome> {
  const sent: UpstreamJson = extend(forwarded, {});
  delete sent.stream;
  const call = (request: UpstreamJson) =>
    deps.queue.run('upstream', () => deps.upstream.chat(target, request, { signal: context.signal }), context.signal);
  return withModelCallSpan(model.id, target, async (span) => {
    let reply = await call(sent);
    let { prompt, completion } = replyTokens(reply, sent);
    let attempts = 1;
    const first = judgeReply(schema, reply);
    if (!first.valid) {
      const again = retryBody(sent, first);
      reply = await call(again);
      attempts = 2;
      const used = replyTokens(reply, again);
      prompt += used.prompt;
      completion += used.completion;
      const second = judgeReply(schema, reply);
      if (!second.valid) throw new UpstreamSchemaViolationError(target.provider, second.errors);
    }
    const billed = await charge(hold, model, prompt, completion, context.requestId);
    recordModelUsage(span, prompt, completion, billed.costMicros / 1e6);
    const answer = extend(reply, {
      model: model.id,
      usage: extend((reply.usage ?? {}) as Json, usageBody(prompt, completion, billed)),
    });
    const headers = { [SCHEMA_ATTEMPTS_HEADER]: String(attempts) };
    if (!delivery.stream) return { stream: false as const, body: answer, headers };
    const chunks = replyAsChunks(answer, delivery.includeUsage);
    return {
      stream: true as const,
      headers,
      batches: (async function* () {
        yield chunks;
      })(),
    };
  });
}

/** How a strict reply is to be answered: as JSON, or as a stream (with a usage chunk when asked for). */
interface StrictDelivery {
  stream: boolean;
  includeUsage: boolean;
}

/** Header of a strict reply: how many upstream calls it took (1, or 2 when the first reply failed the schema). */
export const SCHEMA_ATTEMPTS_HEADER = 'X-Prism-Schema-Attempts';

/** Tokens a reply used: the upstream's count, or (prompt only) an estimate when it reports none. */
function replyTokens(reply: UpstreamJson, sent: UpstreamJson): { prompt: number; completion: number } {
  const usage = (reply.usage ?? {}) as Json;
  return {
    prompt:
      typeof usage.prompt_tokens === 'number'
        ? usage.prompt_tokens
        : countTokens(textOf(sent.messages as ChatMessage[])),
    completion: typeof usage.completion_tokens === 'number' ? usage.completion_tokens : 0,
  };
}

/**
 * A finished reply as the chunks a stream of it would have carried: the whole message in one delta per choice,
 * then the finish reasons, then (when asked for) the usage chunk.
 */
function replyAsChunks(reply: Json, includeUsage: boolean): Json[] {
  const base = { id: reply.id, object: 'chat.completion.chunk', created: reply.created, model: reply.model };
  const choices = Array.isArray(reply.choices) ? (reply.choices as Json[]) : [];
  const deltas = choices.map((choice, index) => {
    const message = (choice.message ?? {}) as Json;
    const delta: Json = { role: 'assistant', content: message.content ?? null };
    if (typeof message.refusal === 'string') delta.refusal = message.refusal;
    if (Array.isArray(message.tool_calls)) {
      delta.tool_calls = (message.tool_calls as Json[]).map((call, i) => ({ index: i, ...call }));
    }
    return { index: choice.index ?? index, delta, finish_reason: null };
  });
  const finishes = choices.map((choice, index) => ({
    index: choice.index ?? index,
    delta: {},
    finish_reason: choice.finish_reason ?? 'stop',
  }));
  const chunks: Json[] = [
    { ...base, choices: deltas },
    { ...base, choices: finishes },
  ];
  if (includeUsage) chunks.push({ ...base, choices: [], usage: reply.usage });
  return chunks;
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
