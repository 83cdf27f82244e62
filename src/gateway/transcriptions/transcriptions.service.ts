/**
 * Audio transcriptions through the gateway (`POST /v1/compat/audio/transcriptions`): resolve a transcription
 * model, check the form against it, measure the audio with the media probe, hold the cost of that many seconds on
 * the payer's wallet (402 before any upstream call when it cannot be covered), send the form on to the upstream's
 * OpenAI-compatible `/audio/transcriptions` under a queue slot, then settle the hold per audio second at the
 * model's `per_minute` price and answer in the format asked for: JSON (`json`, `verbose_json`, with Prism's usage
 * block added) or the upstream's text (`text`, `srt`, `vtt`). With `stream=true`, for a model that lists `stream`
 * among its parameters, the upstream's events are relayed as they come and the hold is settled when they end
 * (released when the stream fails or the client leaves).
 *
 * Billing on the probed duration rather than on what the upstream reports keeps the price known before the call
 * (so the hold is exact) and the same whatever server does the work.
 */
import type { Principal } from '../../domain/account';
import { BadRequestError } from '../../domain/errors';
import type { CancelSignal } from '../../lib/cancel';
import type { RawJson } from '../../lib/raw-json';
import { extend } from '../../lib/extend';
import { microsToDollars, priceCall, type Biller, type ChargeInput, type Hold } from '../../metering/billing';
import { payerOf } from '../../metering/payer';
import type { RequestQueue } from '../../metering/request-queue';
import { billedSeconds } from '../../engines/local/speech-reader';
import type { ModelCatalogue } from '../catalogue/model-catalogue';
import type { CatalogueModel } from '../catalogue/model.types';
import { CapabilityViolationError, UpstreamError } from '../gateway-errors';
import { checkKeyModelOf, type KeyModelCheck } from '../../services/admin/key-model-check';
import {
  encodeMultipart,
  type MultipartField,
  type UpstreamClient,
  type UpstreamRelayStream,
  type UpstreamReply,
} from '../upstream/upstream-client';

/** The formats OpenAI's transcription route answers in; other values are refused before any work. */
export const TRANSCRIPTION_FORMATS = ['json', 'text', 'srt', 'vtt', 'verbose_json'] as const;
export type TranscriptionFormat = (typeof TRANSCRIPTION_FORMATS)[number];

/** Form fields every transcription request has; not subject to the model's `supported_parameters`. */
const CORE_FIELDS = new Set(['model', 'file']);

/** Form fields passed on to the upstream, in this order (the file goes first). */
const FORWARDED = ['language', 'prompt', 'response_format', 'temperature'] as const;

/** The uploaded audio, read whole (transcription uploads are capped small, see `maxBytes` in the route). */
export interface AudioUpload {
  filename: string;
  mimeType: string;
  bytes: Buffer;
}

/** The form's text fields; a field sent more than once (`timestamp_granularities[]`) keeps every value. */
export type TranscriptionFields = Readonly<Record<string, string | readonly string[]>>;

export interface TranscriptionContext {
  requestId: string;
  /** Aborts when the client disconnects. */
  signal: CancelSignal;
  /** Browser fingerprint header of guests (`X-Prism-Fingerprint`), for the guest spend cap. */
  fingerprint: string | null;
}

/** The answer: a JSON body, or text with its content type (`text`, `srt`, `vtt`). */
export type TranscriptionOutcome =
  | { kind: 'json'; body: Record<string, unknown>; headers: Record<string, string> }
  /** The upstream's events, relayed as they arrived (each a JSON object kept as its text). */
  | { kind: 'stream'; batches: AsyncIterable<RawJson[]>; headers: Record<string, string> }
  | { kind: 'text'; contentType: string; text: string; headers: Record<string, string> };

export interface TranscriptionsServiceDeps {
  catalogue: ModelCatalogue;
  upstream: UpstreamClient;
  /** The gateway's biller: keyed calls hold their key's and organisation's budgets before the wallet. */
  biller: Biller;
  queue: RequestQueue;
  /** A key's allow-list of models (docs/admin.md). */
  checkKeyModel?: KeyModelCheck;
  /** The audio's duration in seconds (null: unknown). @throws 400 `invalid_media` for what is not media. */
  audioDuration: (bytes: Buffer) => Promise<number | null>;
}

export interface TranscriptionsService {
  transcribe(
    principal: Principal,
    fields: TranscriptionFields,
    file: AudioUpload,
    context: TranscriptionContext,
  ): Promise<TranscriptionOutcome>;
}

const single = (value: string | readonly string[] | undefined): string | undefined =>
  typeof value === 'string' ? value : value?.[value.length - 1];

/** The field's name without the `[]` form encoders add to repeated fields. */
const bareName = (name: string): string => (name.endsWith('[]') ? name.slice(0, -2) : name);

/** The transcription model `name` resolves to. @throws 400 `capability_violation` for another mode. */
export function resolveTranscriptionModel(catalogue: ModelCatalogue, name: string): CatalogueModel {
  const model = catalogue.resolveServing(name);
  if (model.mode !== 'transcription') {
    throw new CapabilityViolationError(
      `'${model.id}' is a ${model.mode} model, not a transcription model; see GET /v1/compat/models`,
      'model',
    );
  }
  return model;
}

/**
 * Check the form against the model: a known `response_format`, parameters the model reads, a stream only from a
 * model that lists `stream` (its server streams transcriptions).
 * @returns the response format asked for (default `json`) and whether the answer is streamed.
 */
export function checkTranscriptionFields(
  model: CatalogueModel,
  fields: TranscriptionFields,
): { format: TranscriptionFormat; stream: boolean } {
  const stream = single(fields.stream) === 'true';
  for (const name of Object.keys(fields)) {
    const key = bareName(name);
    if (CORE_FIELDS.has(key)) continue;
    if (key === 'stream' && (!stream || model.supportedParameters.includes('stream'))) continue;
    if (key === 'stream') {
      throw new CapabilityViolationError(
        `'${model.id}' does not stream transcriptions; list \`stream\` in its supported_parameters when its server does`,
        'stream',
      );
    }
    if (!model.supportedParameters.includes(key)) {
      throw new CapabilityViolationError(
        `'${model.id}' does not read the parameter '${key}'; it reads: ${model.supportedParameters.join(', ') || 'none'}`,
        key,
      );
    }
  }
  const format = single(fields.response_format) ?? 'json';
  if (!(TRANSCRIPTION_FORMATS as readonly string[]).includes(format)) {
    throw new CapabilityViolationError(
      `response_format '${format}' is not supported for transcriptions; use one of: ${TRANSCRIPTION_FORMATS.join(', ')}`,
      'response_format',
    );
  }
  const temperature = single(fields.temperature);
  if (temperature !== undefined && !(Number(temperature) >= 0 && Number(temperature) <= 1)) {
    throw new BadRequestError('temperature must be a number from 0 to 1.', null, 'temperature');
  }
  return { format: format as TranscriptionFormat, stream };
}

export function createTranscriptionsService(deps: TranscriptionsServiceDeps): TranscriptionsService {
  const { catalogue, upstream, biller, queue } = deps;

  return {
    async transcribe(principal, fields, file, context) {
      const requested = String(single(fields.model) ?? '');
      await checkKeyModelOf(deps.checkKeyModel, principal, requested);
      const model = resolveTranscriptionModel(catalogue, requested);
      const { format, stream } = checkTranscriptionFields(model, fields);
      const target = catalogue.upstreamTarget(model);
      if (!target) throw new CapabilityViolationError(`'${model.id}' has no upstream to transcribe with`, 'model');
      const durationS = await deps.audioDuration(file.bytes);
      if (durationS === null || !Number.isFinite(durationS)) {
        throw new BadRequestError('The audio has no duration Prism can read.', 'invalid_media', 'file');
      }
      const seconds = billedSeconds(durationS);
      const usage = { promptTokens: 0, completionTokens: 0, audioSeconds: seconds };
      const priced = priceCall(model.pricing, usage);
      const hold = await biller.reserve(payerOf(principal, { fingerprint: context.fingerprint }), priced.costMicros);
      const settlement: ChargeInput = {
        pricing: model.pricing,
        usage,
        reason: `audio.transcriptions ${model.id} ${context.requestId}`,
      };
      const form = encodeMultipart(formFor(target.model, fields, file, stream));
      let reply: UpstreamReply;
      try {
        if (stream) {
          const release = await queue.acquire('upstream', context.signal);
          let relayed: UpstreamReply | UpstreamRelayStream;
          try {
            relayed = await upstream.relayTranscription(target, form, context);
          } catch (error) {
            release();
            throw error;
          }
          if (!('contentType' in relayed)) {
            const headers = {
              'x-prism-audio-seconds': String(seconds),
              'x-prism-cost': String(microsToDollars(priced.costMicros)),
            };
            return { kind: 'stream', batches: billedStream(relayed, hold, settlement, release), headers };
          }
          release();
          reply = relayed;
        } else {
          reply = await queue.run('upstream', () => upstream.transcribe(target, form, context), context.signal);
        }
      } catch (error) {
        hold.release();
        throw error;
      }
      const charge = await hold.settle(settlement);
      const cost = microsToDollars(charge.costMicros);
      const headers = { 'x-prism-audio-seconds': String(seconds), 'x-prism-cost': String(cost) };
      if (format === 'json' || format === 'verbose_json') {
        const body = parseReply(reply.body, target.provider);
        const extra: Record<string, unknown> = {
          usage: { type: 'duration', seconds, cost, credits_used: cost },
        };
        if (format === 'verbose_json' && typeof body.duration !== 'number') extra.duration = durationS;
        return { kind: 'json', body: extend(body, extra), headers };
      }
      const contentType = reply.contentType.startsWith('application/json')
        ? 'text/plain; charset=utf-8'
        : reply.contentType;
      return { kind: 'text', contentType, text: textOf(reply.body, reply.contentType, target.provider), headers };
    },
  };
}

/**
 * A relayed stream that settles the hold when it ends and releases it (and the queue slot) however else it stops:
 * a failure mid-stream or a client that leaves is not billed.
 */
async function* billedStream(
  stream: UpstreamRelayStream,
  hold: Hold,
  settlement: ChargeInput,
  releaseSlot: () => void,
): AsyncGenerator<RawJson[]> {
  let finished = false;
  try {
    for await (const batch of stream) yield batch;
    finished = true;
  } finally {
    releaseSlot();
    if (finished) await hold.settle(settlement);
    else hold.release();
  }
}

/** The upstream's form: the file, its model name, then the caller's fields it reads, in a stable order. */
function formFor(
  upstreamModel: string,
  fields: TranscriptionFields,
  file: AudioUpload,
  stream: boolean,
): Array<readonly [string, MultipartField]> {
  const form: Array<readonly [string, MultipartField]> = [
    ['file', { filename: file.filename, contentType: file.mimeType, bytes: file.bytes }],
    ['model', upstreamModel],
  ];
  for (const name of FORWARDED) {
    const value = single(fields[name]);
    if (value !== undefined) form.push([name, value]);
  }
  const granularities = [fields['timestamp_granularities[]'] ?? [], fields.timestamp_granularities ?? []].flat();
  for (const value of granularities) form.push(['timestamp_granularities[]', value]);
  if (stream) form.push(['stream', 'true']);
  return form;
}

function parseReply(body: Buffer, provider: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw new UpstreamError(provider, 'The upstream sent a transcription that is not JSON');
  }
  if (
    typeof value !== 'object' ||
    value === null ||
    Array.isArray(value) ||
    typeof (value as { text?: unknown }).text !== 'string'
  ) {
    throw new UpstreamError(provider, 'The upstream sent a transcription without its text');
  }
  return value as Record<string, unknown>;
}

/** The text of a `text`/`srt`/`vtt` reply; a server that wraps it in JSON (`{"text": …}`) is unwrapped. */
function textOf(body: Buffer, contentType: string, provider: string): string {
  const text = body.toString('utf8');
  if (!contentType.startsWith('application/json')) return text;
  try {
    const value = JSON.parse(text) as { text?: unknown } | string;
    if (typeof value === 'string') return value;
    if (typeof value?.text === 'string') return value.text;
  } catch {
    return text;
  }
  throw new UpstreamError(provider, 'The upstream sent a transcription without its text');
}
