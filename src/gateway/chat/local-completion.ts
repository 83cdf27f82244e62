/**
 * A chat call on the embedded engines (`prism-1` and its methods): read the one media part, answer with the local
 * extraction engine under the model's deadline (cancelled with the client), count and bill the tokens, and answer
 * whole or as one batch of SSE chunks. Runs in the `local` lane of the request queue, taking turns per organisation
 * in the shared OCR pool.
 */
import type { Principal } from '../../domain/account';
import { ClientDisconnectedError } from '../../domain/errors';
import { defaultPredictionRequest, type PredictionRequest } from '../../domain/prediction';
import { CancelController, WorkCancelledError } from '../../lib/cancel';
import { runForTenant } from '../../lib/work-tenant';
import type { Hold } from '../../metering/billing';
import { resolveSingleInput } from '../../services/inputs/resolve-input';
import type { CatalogueModel } from '../catalogue/model.types';
import { DeadlineExceededError } from '../gateway-errors';
import { countTokens, mediaParts, textOf, type ChatMessage } from '../message-inputs';
import { charge, completionId, REASONING_TOKENS, usageBody } from './chat-usage';
import type { ChatContext, ChatOutcome, ChatServiceDeps, Json } from './chat.types';
import { answerLocally, effectiveMethod } from './local-chat';
import { readMethodParams } from './method-params';

/** Answers one chat call on the embedded engines; the hold is given back when it fails. */
export type LocalCompletion = (
  principal: Principal,
  model: CatalogueModel,
  body: Json,
  context: ChatContext,
  hold: Hold,
) => Promise<ChatOutcome>;

export function createLocalCompletion(deps: Pick<ChatServiceDeps, 'inputs' | 'extraction' | 'queue'>): LocalCompletion {
  const { queue } = deps;

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

  return async (principal, model, body, context, hold) => {
    const stream = body.stream === true;
    const includeUsage = (body.stream_options as Json | undefined)?.include_usage === true;
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
  };
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
