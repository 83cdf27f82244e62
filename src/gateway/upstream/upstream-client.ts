/**
 * Calls OpenAI-compatible servers (vLLM, llama.cpp, Ollama, OpenAI, other gateways) for chat completions,
 * embeddings and audio transcriptions (a multipart form, answered as JSON or as text), with the model's deadlines enforced here rather than trusted to the upstream.
 *
 * - Streaming resolves only once the FIRST chunk has arrived, under `ttft_timeout_s` (504 `ttft_timeout`
 *   otherwise), so the route can still answer with a JSON error before any SSE byte.
 * - `total_timeout_s` covers the whole call, stream included, and aborts the upstream request (504
 *   `deadline_exceeded`); a non-streaming call aborted so returns nothing partial.
 * - The caller's cancel signal (client disconnect) cancels the upstream request (499 `client_disconnected`).
 * - Connection failures and 502/503/504 answers are retried (`retries`, default 1) while nothing has been
 *   received and the total deadline allows; nothing is retried once a chunk has arrived.
 * Sends through the undici transport of http-transport.ts (injectable for tests), not `fetch` and never the
 * openai SDK; per-target URLs and request headers are built once and reused.
 */
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { AppError } from '../../domain/errors';
import type { CancelSignal } from '../../lib/cancel';
import { extend } from '../../lib/extend';
import { RawJson } from '../../lib/raw-json';
import { UpstreamError } from '../gateway-errors';
import type { UpstreamTarget } from '../catalogue/model.types';
import { createHttpTransport, ResponseTooLargeError, type Transport, type UpstreamResponse } from './http-transport';
import { CallScope, isAppError } from './upstream-call-scope';
import { readSseEventBatches, type SseEvent } from './sse-parser';
import { mapUpstreamStatus } from './upstream-errors';
import { withTraceHeaders } from '../../lib/tracing';

/** A JSON object from the upstream: a chat completion, a chunk, or an embeddings response. */
export type UpstreamJson = Record<string, unknown>;

export interface UpstreamCallOptions {
  /** Aborts the upstream call, e.g. when our client disconnects. */
  signal?: CancelSignal;
  /** Streaming only: add `stream_options.include_usage` so the last chunk carries usage for billing (default). */
  includeUsage?: boolean;
}

/**
 * Chunks of a streamed chat completion as they arrive, one non-empty array per network read (a read often
 * carries several events, and a consumer handling them together pays for one async step instead of one per
 * chunk); `return()` (or breaking a `for await`) cancels the upstream call.
 */
export type UpstreamStream = AsyncIterableIterator<UpstreamJson[]>;

/**
 * The same stream for a relay: each chunk kept as the JSON text it arrived in (checked to be an object that is
 * not an error), so it can be passed on without being parsed and serialised again.
 */
export type UpstreamRelayStream = AsyncIterableIterator<RawJson[]>;

export interface UpstreamClient {
  /** POST /chat/completions, not streamed. */
  chat(target: UpstreamTarget, body: UpstreamJson, options?: UpstreamCallOptions): Promise<UpstreamJson>;
  /** POST /chat/completions with `stream: true`; resolves once the first chunks have arrived. */
  streamChat(target: UpstreamTarget, body: UpstreamJson, options?: UpstreamCallOptions): Promise<UpstreamStream>;
  /** `streamChat` for a relay: the same call, deadlines and errors, with chunks as text (see RawJson). */
  relayChat(target: UpstreamTarget, body: UpstreamJson, options?: UpstreamCallOptions): Promise<UpstreamRelayStream>;
  /** POST /embeddings. */
  embeddings(target: UpstreamTarget, body: UpstreamJson, options?: UpstreamCallOptions): Promise<UpstreamJson>;
  /**
   * POST /audio/transcriptions with a multipart form (built by `encodeMultipart`, its `model` field already the
   * upstream's name); the reply as it came: its content type and bytes (JSON, or text for `text`/`srt`/`vtt`).
   */
  transcribe(target: UpstreamTarget, form: MultipartBody, options?: UpstreamCallOptions): Promise<UpstreamReply>;
  /**
   * The same call with `stream=true` in the form: the upstream's events as text for a relay, resolved once the
   * first ones arrived; an upstream that answers with one JSON reply instead (it does not stream) gives that reply.
   */
  relayTranscription(
    target: UpstreamTarget,
    form: MultipartBody,
    options?: UpstreamCallOptions,
  ): Promise<UpstreamReply | UpstreamRelayStream>;
}

/** A multipart/form-data body ready to send. */
export interface MultipartBody {
  contentType: string;
  bytes: Buffer;
}

/** A 2xx reply kept as bytes, with its content type (`application/json` when the upstream sent none). */
export interface UpstreamReply {
  contentType: string;
  body: Buffer;
}

export interface UpstreamClientOptions {
  /** How requests are sent (default: `createHttpTransport()`, undici's keep-alive pools). */
  transport?: Transport;
  /** Extra attempts after a connection failure or a 502/503/504, before anything was received. */
  retries?: number;
  retryBackoffMs?: number;
  userAgent?: string;
}

export function createUpstreamClient(options: UpstreamClientOptions = {}): UpstreamClient {
  const transport = options.transport ?? createHttpTransport();
  const retries = options.retries ?? 1;
  const backoffMs = options.retryBackoffMs ?? 200;
  const userAgent = options.userAgent ?? 'prism-gateway';
  const chatUrls = new UrlCache('/chat/completions');
  const embeddingsUrls = new UrlCache('/embeddings');
  const transcriptionUrls = new UrlCache('/audio/transcriptions');
  const jsonHeaders = new HeaderCache('application/json', userAgent);
  const streamHeaders = new HeaderCache('text/event-stream', userAgent);

  /** POST and return a 2xx response, retrying transient failures; throws our error otherwise. */
  const post = async (
    scope: CallScope,
    url: URL,
    body: UpstreamJson | MultipartBody,
    headers: Record<string, string>,
  ): Promise<UpstreamResponse> => {
    const { target } = scope;
    // The current span (a model call's) goes upstream as `traceparent` when tracing is on; else the same headers.
    const init = {
      method: 'POST',
      headers: withTraceHeaders(headers),
      body: body instanceof MultipartForm ? body.bytes : JSON.stringify(body),
      signal: scope.controller.signal,
    };
    for (let attempt = 0; ; attempt += 1) {
      let failure: AppError;
      try {
        const res = await transport(url, init);
        if (res.status >= 200 && res.status < 300) return res;
        const text = res.body === undefined ? '' : utf8(res.body);
        failure = mapUpstreamStatus(target.provider, res.status, text, firstValue(res.headers['retry-after']));
        if (res.status !== 502 && res.status !== 503 && res.status !== 504) throw failure;
      } catch (thrown) {
        const error = thrown instanceof ResponseTooLargeError ? tooLarge(target.provider, thrown) : thrown;
        failure = scope.translate(error);
        if (scope.cause !== null || isAppError(error)) throw failure;
      }
      const wait = backoffMs * 2 ** attempt;
      if (attempt >= retries || Date.now() + wait >= scope.deadline) throw failure;
      await sleep(wait, scope.controller.signal);
      if (scope.cause !== null) throw scope.translate(null);
    }
  };

  const unary = async (
    urls: UrlCache,
    target: UpstreamTarget,
    body: UpstreamJson,
    options: UpstreamCallOptions,
  ): Promise<UpstreamJson> => {
    const scope = new CallScope(target, options.signal, false);
    try {
      const res = await post(scope, urls.get(target.baseUrl), body, jsonHeaders.get(target.apiKey));
      if (res.body === undefined) {
        res.stream.destroy();
        throw new UpstreamError(target.provider, 'The upstream sent an event stream where a JSON reply was expected');
      }
      return parseObject(res.body, target.provider, 'a reply');
    } catch (error) {
      throw scope.translate(error);
    } finally {
      scope.dispose();
    }
  };

  /** POST a streamed call; resolves once the first chunks have arrived (read into chunks by `toChunks`). */
  const openStream = async <T>(
    target: UpstreamTarget,
    body: UpstreamJson,
    opts: UpstreamCallOptions,
    toChunks: (events: AsyncIterable<SseEvent[]>, provider: string) => AsyncGenerator<T[]>,
  ): Promise<AsyncIterableIterator<T[]>> => {
    const scope = new CallScope(target, opts.signal, true);
    const streamOptions = opts.includeUsage === false ? body.stream_options : usageOn(body.stream_options);
    const payload = extend(body, { model: target.model, stream: true, stream_options: streamOptions });
    try {
      const res = await post(scope, chatUrls.get(target.baseUrl), payload, streamHeaders.get(target.apiKey));
      const { stream } = res;
      // Not destroyed when the reader stops at `[DONE]`, so the rest can be drained and the socket kept (streamFrom);
      // a 2xx not labelled text/event-stream is still read as events, as a lenient client would.
      const source = stream
        ? (stream.setEncoding('utf8').iterator({ destroyOnReturn: false }) as AsyncIterable<string>)
        : [res.body];
      const batches = toChunks(readSseEventBatches(source), target.provider);
      const first = await batches.next();
      if (first.done) throw new UpstreamError(target.provider, 'The upstream ended the stream without a chunk');
      scope.firstChunkArrived();
      return streamFrom(first.value, batches, scope, stream);
    } catch (error) {
      scope.dispose();
      scope.controller.abort();
      throw scope.translate(error);
    }
  };

  return {
    chat(target, body, opts = {}) {
      const { stream: _stream, stream_options: _streamOptions, ...rest } = body;
      return unary(chatUrls, target, extend(rest, { model: target.model }), opts);
    },
    embeddings(target, body, opts = {}) {
      return unary(embeddingsUrls, target, extend(body, { model: target.model }), opts);
    },
    streamChat(target, body, opts = {}) {
      return openStream(target, body, opts, chunkBatches);
    },
    relayChat(target, body, opts = {}) {
      return openStream(target, body, opts, relayBatches);
    },
    async relayTranscription(target, form, opts = {}) {
      const scope = new CallScope(target, opts.signal, true);
      const headers = extend(streamHeaders.get(target.apiKey), { 'content-type': form.contentType });
      try {
        const res = await post(scope, transcriptionUrls.get(target.baseUrl), new MultipartForm(form), headers);
        if (res.body !== undefined) {
          scope.dispose();
          return { contentType: firstValue(res.headers['content-type']) ?? 'application/json', body: res.body };
        }
        const source = res.stream.setEncoding('utf8').iterator({ destroyOnReturn: false }) as AsyncIterable<string>;
        const batches = relayBatches(readSseEventBatches(source), target.provider);
        const first = await batches.next();
        if (first.done) throw new UpstreamError(target.provider, 'The upstream ended the stream without an event');
        scope.firstChunkArrived();
        return streamFrom(first.value, batches, scope, res.stream);
      } catch (error) {
        scope.dispose();
        scope.controller.abort();
        throw scope.translate(error);
      }
    },
    async transcribe(target, form, opts = {}) {
      const scope = new CallScope(target, opts.signal, false);
      const headers = extend(jsonHeaders.get(target.apiKey), { 'content-type': form.contentType, accept: '*/*' });
      try {
        const res = await post(scope, transcriptionUrls.get(target.baseUrl), new MultipartForm(form), headers);
        if (res.body === undefined) {
          res.stream.destroy();
          throw new UpstreamError(target.provider, 'The upstream sent an event stream where a reply was expected');
        }
        return { contentType: firstValue(res.headers['content-type']) ?? 'application/json', body: res.body };
      } catch (error) {
        throw scope.translate(error);
      } finally {
        scope.dispose();
      }
    },
  };
}

/** Marks a body as multipart bytes (sent as they are) rather than JSON to serialise. */
class MultipartForm implements MultipartBody {
  readonly contentType: string;
  readonly bytes: Buffer;
  constructor(form: MultipartBody) {
    this.contentType = form.contentType;
    this.bytes = form.bytes;
  }
}

/** A field of a multipart form: text, or a file's bytes with its name and type. */
export type MultipartField = string | { filename: string; contentType: string; bytes: Buffer };

/** Encodes `fields` (in order; an array value repeats the field, as `timestamp_granularities[]` does). */
export function encodeMultipart(fields: ReadonlyArray<readonly [string, MultipartField]>): MultipartBody {
  const boundary = `----prism${randomBytes(12).toString('hex')}`;
  const parts: Buffer[] = [];
  const quoted = (s: string): string => s.replace(/["\r\n]/g, '_');
  for (const [name, value] of fields) {
    if (typeof value === 'string') {
      parts.push(
        Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${quoted(name)}"\r\n\r\n${value}\r\n`),
      );
    } else {
      parts.push(
        Buffer.from(
          `--${boundary}\r\ncontent-disposition: form-data; name="${quoted(name)}"; filename="${quoted(value.filename)}"\r\n` +
            `content-type: ${value.contentType}\r\n\r\n`,
        ),
        value.bytes,
        Buffer.from('\r\n'),
      );
    }
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { contentType: `multipart/form-data; boundary=${boundary}`, bytes: Buffer.concat(parts) };
}

/**
 * JSON chunks until `[DONE]`, one non-empty array per batch of events. An upstream error event (or an event that
 * is not a JSON object) becomes a 502, thrown after the chunks that came before it in the same batch.
 */
async function* chunkBatches(batches: AsyncIterable<SseEvent[]>, provider: string): AsyncGenerator<UpstreamJson[]> {
  for await (const events of batches) {
    const chunks: UpstreamJson[] = [];
    let failure: AppError | null = null;
    let done = false;
    for (const event of events) {
      if (event.data === '[DONE]') {
        done = true;
        break;
      }
      const chunk = chunkOf(event, provider);
      if (isAppError(chunk)) {
        failure = chunk;
        break;
      }
      chunks.push(chunk);
    }
    if (chunks.length > 0) yield chunks;
    if (failure !== null) throw failure;
    if (done) return;
  }
}

/**
 * `chunkBatches` for a relay: each chunk as its text. Only an event that may be an error (an `error` event, or one
 * with an `"error"` key: inside a JSON string every quote is escaped, so that text cannot come from a value) or
 * that does not look like one object is parsed, to report it as `chunkOf` does.
 */
async function* relayBatches(batches: AsyncIterable<SseEvent[]>, provider: string): AsyncGenerator<RawJson[]> {
  for await (const events of batches) {
    const chunks: RawJson[] = [];
    let failure: AppError | null = null;
    let done = false;
    for (const event of events) {
      const { data } = event;
      if (data === '[DONE]') {
        done = true;
        break;
      }
      if (event.event === 'error' || !looksLikeObject(data) || data.includes('"error"')) {
        const chunk = chunkOf(event, provider);
        if (isAppError(chunk)) {
          failure = chunk;
          break;
        }
      }
      chunks.push(new RawJson(data));
    }
    if (chunks.length > 0) yield chunks;
    if (failure !== null) throw failure;
    if (done) return;
  }
}

/**
 * Starts with `{` and ends with `}`, on one line (a frame's data must not break the SSE framing). Anything else,
 * white space around an object included, takes the parsed path.
 */
function looksLikeObject(data: string): boolean {
  return data.charCodeAt(0) === 123 && data.charCodeAt(data.length - 1) === 125 && !data.includes('\n');
}

/** One event's chunk, or the 502 it stands for (an error event, or an event that is not a JSON object). */
function chunkOf(event: SseEvent, provider: string): UpstreamJson | AppError {
  let chunk: UpstreamJson;
  try {
    chunk = parseObject(event.data, provider, 'an event');
  } catch (error) {
    return isAppError(error) ? error : new UpstreamError(provider, 'The upstream sent an event that is not JSON');
  }
  if (event.event === 'error' || chunk.error !== undefined) {
    const e = chunk.error as { message?: unknown } | string | undefined;
    const message = typeof e === 'string' ? e : typeof e?.message === 'string' ? e.message : event.data;
    return new UpstreamError(provider, `The upstream failed mid-stream: ${message}`);
  }
  return chunk;
}

function streamFrom<T>(
  first: T[],
  batches: AsyncGenerator<T[]>,
  scope: CallScope,
  body: Readable | undefined,
): AsyncIterableIterator<T[]> {
  let pending: T[] | null = first;
  let finished = false;
  /** Ends the call; `cancel` also aborts the upstream request (not needed after a clean `[DONE]`). */
  const close = (cancel: boolean): void => {
    if (finished) return;
    finished = true;
    if (cancel) {
      scope.dispose();
      scope.controller.abort();
      batches.return(undefined).catch(() => undefined);
    } else if (body === undefined || body.readableEnded || body.destroyed) {
      scope.dispose();
    } else {
      // `[DONE]` came before the end of the body: read that end so the socket goes back to the keep-alive pool
      // (destroying the body would close it), still under the total deadline.
      body.once('close', () => scope.dispose());
      body.resume();
    }
  };
  const iterator: AsyncIterableIterator<T[]> = {
    async next() {
      if (pending) {
        const value = pending;
        pending = null;
        return { done: false, value };
      }
      if (finished) return { done: true, value: undefined };
      try {
        const next = await batches.next();
        if (next.done) close(false);
        return next.done ? { done: true, value: undefined } : next;
      } catch (error) {
        close(true);
        throw scope.translate(error);
      }
    },
    async return() {
      close(true);
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}

function usageOn(streamOptions: unknown): UpstreamJson {
  const base = typeof streamOptions === 'object' && streamOptions !== null ? (streamOptions as UpstreamJson) : {};
  return extend(base, { include_usage: true });
}

/** Built once per base URL (targets are fresh objects per request, their base URLs are few). */
class UrlCache {
  private readonly urls = new Map<string, URL>();
  constructor(private readonly path: string) {}

  /** @throws TypeError for a base URL that is not a URL (the caller reports it as a connection failure). */
  get(baseUrl: string): URL {
    let url = this.urls.get(baseUrl);
    if (url === undefined) {
      url = new URL(baseUrl + this.path);
      if (this.urls.size >= 1024) this.urls.clear();
      this.urls.set(baseUrl, url);
    }
    return url;
  }
}

/** Request headers per API key, shared between calls (the transport never modifies them). */
class HeaderCache {
  private readonly byKey = new Map<string, Record<string, string>>();
  constructor(
    private readonly accept: string,
    private readonly userAgent: string,
  ) {}

  get(apiKey: string | null): Record<string, string> {
    const key = apiKey ?? '';
    let headers = this.byKey.get(key);
    if (headers === undefined) {
      headers = { 'content-type': 'application/json', accept: this.accept, 'user-agent': this.userAgent };
      if (key) headers.authorization = `Bearer ${key}`;
      Object.freeze(headers);
      if (this.byKey.size >= 1024) this.byKey.clear();
      this.byKey.set(key, headers);
    }
    return headers;
  }
}

function tooLarge(provider: string, error: ResponseTooLargeError): AppError {
  const mib = Math.round((error.limitBytes / 2 ** 20) * 10) / 10;
  return new UpstreamError(provider, `The upstream sent a reply larger than ${mib} MiB`);
}

/** A header's value (the first, if it was sent more than once), or null. */
function firstValue(value: string | string[] | undefined): string | null {
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

/** UTF-8 text of a reply; a leading byte order mark is dropped (as `Response.text()` did). */
function utf8(body: Buffer): string {
  const bom = body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf;
  return body.toString('utf8', bom ? 3 : 0);
}

function parseObject(text: string | Buffer, provider: string, what: string): UpstreamJson {
  let value: unknown;
  try {
    value = JSON.parse(typeof text === 'string' ? text : utf8(text));
  } catch {
    throw new UpstreamError(provider, `The upstream sent ${what} that is not JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UpstreamError(provider, `The upstream sent ${what} that is not a JSON object`);
  }
  return value as UpstreamJson;
}

function sleep(ms: number, signal: CancelSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
