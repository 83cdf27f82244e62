/**
 * The OpenAI-compatible routes of the gateway (mounted on `/v1/compat` and `/v1/openai`): model listing, chat
 * completions (JSON 201 or SSE), embeddings and audio transcriptions (multipart in; JSON or text out). Parse, one service call, render; streaming goes through the one
 * SSE writer, which reads the first chunk before writing anything so early failures are still JSON errors.
 */
import type { ServerResponse } from 'node:http';
import { Router } from 'express';
import type { Principal } from '../../domain/account';
import { z } from 'zod';
import type { ChatService } from '../../gateway/chat/chat.types';
import type { EmbeddingsService } from '../../gateway/embeddings/embeddings.service';
import type { TranscriptionsService } from '../../gateway/transcriptions/transcriptions.service';
import { receiveAudioForm } from '../audio-upload';
import type { ModelCatalogue } from '../../gateway/catalogue/model-catalogue';
import { toListingRecord } from '../../gateway/catalogue/model-catalogue';
import { createSseWriter } from '../sse';
import { principalOf } from '../request-context';
import { BadRequestError } from '../../domain/errors';
import { MAX_VIDEO_FRAMES } from '../../wire/predictions.schemas';
import { sendJson } from '../send-json';
import { chatBodySchema, parseChatBody, parseChatThreadFields } from '../../wire/chat.schemas';
import { MODEL_LIST_EXAMPLE } from '../api/examples';
import { declare, route } from '../api/route-declaration';
import {
  chatCompletionSchema,
  embeddingsSchema,
  modelListSchema,
  modelSchema,
  transcriptionSchema,
} from '../api/response-schemas';
import { CancelController, type CancelSignal } from '../../lib/cancel';

export const embeddingsBodySchema = z
  .object({
    model: z.string().min(1),
    input: z.union([z.string(), z.array(z.unknown()), z.record(z.string(), z.unknown())]),
    encoding_format: z.enum(['float', 'base64']).nullish(),
    dimensions: z.number().int().min(1).nullish(),
    prompt_name: z.string().nullish(),
    truncate_prompt_tokens: z.number().int().min(-1).nullish(),
    document_max_pages: z.number().int().min(1).nullish(),
    user: z.string().nullish(),
  })
  .loose();

/** The text fields of a transcription form; the rest (formats, parameters) is checked against the model. */
export const transcriptionFieldsSchema = z
  .object({
    model: z.string().min(1).max(200),
    language: z.string().max(32).optional(),
    prompt: z.string().max(16_384).optional(),
    response_format: z.string().optional(),
    temperature: z.string().optional(),
  })
  .loose();

export const modelParamsSchema = z.object({ model: z.string().min(1).max(200) });

const tag = 'Gateway';

export const COMPAT_ROUTES = {
  models: declare({
    method: 'get',
    path: '/models',
    tag,
    summary: 'List the models',
    auth: 'open',
    responses: {
      200: { description: 'The models (OpenAI list)', schema: modelListSchema, example: MODEL_LIST_EXAMPLE },
    },
  }),
  model: declare({
    method: 'get',
    path: '/models/:model',
    tag,
    summary: 'One model',
    auth: 'open',
    params: modelParamsSchema,
    responses: { 200: { description: 'The model', schema: modelSchema } },
    errors: [404],
  }),
  chat: declare({
    method: 'post',
    path: '/chat/completions',
    tag,
    summary: 'Chat completion (JSON, or server-sent events with `stream: true`)',
    auth: 'open',
    body: chatBodySchema,
    responses: {
      201: {
        description: 'The completion',
        schema: chatCompletionSchema,
        alsoStreams: 'With `stream: true`: chat.completion.chunk events, then `[DONE]`',
      },
    },
    errors: [400, 402, 403, 404, 413, 502, 503, 504],
  }),
  embeddings: declare({
    method: 'post',
    path: '/embeddings',
    tag,
    summary: 'Embeddings',
    auth: 'open',
    body: embeddingsBodySchema,
    responses: { 200: { description: 'The embeddings', schema: embeddingsSchema } },
    errors: [400, 402, 403, 404, 502, 504],
  }),
  transcriptions: declare({
    method: 'post',
    path: '/audio/transcriptions',
    tag,
    summary: 'Transcribe audio (multipart: `file` and `model`)',
    auth: 'open',
    body: transcriptionFieldsSchema,
    rawBody: { kind: 'multipart' },
    responses: {
      200: {
        description: 'The transcription (`json`/`verbose_json`; `text`, `srt` and `vtt` answer text)',
        schema: transcriptionSchema,
        alsoStreams: 'With `stream=true`: transcript.text.delta events',
      },
    },
    errors: [400, 402, 403, 404, 413, 502, 504],
  }),
};

export interface CompatRoutesDeps {
  catalogue: ModelCatalogue;
  chat: ChatService;
  embeddings: EmbeddingsService;
  transcriptions: TranscriptionsService;
  /** Largest audio file a transcription takes (`PRISM_MAX_TRANSCRIPTION_BYTES`). */
  maxTranscriptionBytes: number;
}

/** A signal that aborts when the client goes away before its response is finished. */
function abortedOnDisconnect(res: ServerResponse): CancelSignal {
  const disconnect = new CancelController();
  res.on('close', () => {
    if (!res.writableFinished) disconnect.abort();
  });
  return disconnect.signal;
}

/** One chat completion call as both the express route and the gateway fast lane hand it over. */
export interface ChatCall {
  /** The parsed JSON body, as the caller sent it. */
  body: unknown;
  principal: Principal;
  requestId: string;
  fingerprint: string | null;
  /** The `X-Session-Id` header: the chat thread an agent-model call continues. */
  sessionHeader?: string | null;
}

/**
 * Validate, run and answer one chat completion: 201 JSON or SSE. Throws AppErrors for the caller's error
 * responder; after the first SSE byte, failures are error frames instead.
 */
export async function serveChatCompletion(
  deps: Pick<CompatRoutesDeps, 'chat'>,
  call: ChatCall,
  res: ServerResponse,
): Promise<void> {
  const body = parseChatBody(call.body);
  parseChatThreadFields(call.body);
  if ((body.video_max_frames ?? 0) > MAX_VIDEO_FRAMES) {
    // Chat rule 6: a video_max_frames over the limit is a 400, not a validation error.
    throw new BadRequestError(`video_max_frames is at most ${MAX_VIDEO_FRAMES}.`, null, 'video_max_frames');
  }
  // The raw body (not the parsed one) is what capability checks look at: only what the caller sent counts.
  const raw = call.body as Record<string, unknown>;
  // A stream's writer watches for the client leaving itself.
  const writer = body.stream ? createSseWriter(res, { requestId: call.requestId }) : null;
  const outcome = await deps.chat.complete(call.principal, raw, {
    requestId: call.requestId,
    signal: writer?.signal ?? abortedOnDisconnect(res),
    fingerprint: call.fingerprint,
    sessionHeader: call.sessionHeader ?? null,
  });
  for (const [name, value] of Object.entries(outcome.headers ?? {})) res.setHeader(name, value);
  if (!outcome.stream) {
    sendJson(res, 201, outcome.body);
    return;
  }
  await (writer ?? createSseWriter(res, { requestId: call.requestId })).pipe(outcome.batches);
}

export function compatRoutes(deps: CompatRoutesDeps): Router {
  const router = Router();

  route(router, COMPAT_ROUTES.models, (_req, res) => {
    res.json({ object: 'list', data: deps.catalogue.list().map(toListingRecord) });
  });

  route(router, COMPAT_ROUTES.model, (_req, res, input) => {
    const { model } = input.params();
    res.json(toListingRecord(deps.catalogue.resolve(model)));
  });

  // The body is parsed by serveChatCompletion (with chatBodySchema, the declaration's): the fast lane shares it.
  route(router, COMPAT_ROUTES.chat, async (req, res) => {
    await serveChatCompletion(
      deps,
      {
        body: req.body,
        principal: principalOf(req),
        requestId: req.requestId,
        fingerprint: req.get('x-prism-fingerprint') ?? null,
        sessionHeader: req.get('x-session-id') ?? null,
      },
      res,
    );
  });

  route(router, COMPAT_ROUTES.embeddings, async (req, res, input) => {
    input.body();
    const signal = abortedOnDisconnect(res);
    res.json(await deps.embeddings.embed(principalOf(req), req.body as Record<string, unknown>, signal));
  });

  route(router, COMPAT_ROUTES.transcriptions, async (req, res, input) => {
    const principal = principalOf(req);
    const form = await receiveAudioForm(req, deps.maxTranscriptionBytes);
    input.body(form.fields);
    const outcome = await deps.transcriptions.transcribe(principal, form.fields, form.file, {
      requestId: req.requestId,
      signal: abortedOnDisconnect(res),
      fingerprint: req.get('x-prism-fingerprint') ?? null,
    });
    if (outcome.kind === 'stream') {
      await createSseWriter(res, { requestId: req.requestId }).pipe(outcome.batches, outcome.headers);
      return;
    }
    for (const [name, value] of Object.entries(outcome.headers)) res.setHeader(name, value);
    if (outcome.kind === 'json') {
      res.json(outcome.body);
      return;
    }
    res.type(outcome.contentType).send(outcome.text);
  });

  return router;
}
