/**
 * A chat call on an upstream server: forward the body without Prism's own parameters, run it in the `upstream` lane
 * of the request queue, relay a stream as text (relabelled, usage read from it) or the reply as JSON, and bill the
 * tokens the upstream reports (or an estimate when it reports none).
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

/** Answers one chat call on the upstream server `target`; the hold is given back when it fails. */
export type UpstreamCompletion = (
  model: CatalogueModel,
  target: UpstreamTarget,
  body: Json,
  context: ChatContext,
  hold: Hold,
) => Promise<ChatOutcome>;

export function createUpstreamCompletion(deps: Pick<ChatServiceDeps, 'upstream' | 'queue'>): UpstreamCompletion {
  const { queue } = deps;

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

  return async (model, target, body, context, hold) => {
    const stream = body.stream === true;
    const includeUsage = (body.stream_options as Json | undefined)?.include_usage === true;
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

/** Characters of a parsed chunk's delta content, over its choices. */
function deltaChars(chunk: Json): number {
  let chars = 0;
  for (const choice of Array.isArray(chunk.choices) ? (chunk.choices as Json[]) : []) {
    const delta = choice.delta as Json | undefined;
    if (typeof delta?.content === 'string') chars += delta.content.length;
  }
  return chars;
}
