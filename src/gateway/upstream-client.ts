/**
 * Calls OpenAI-compatible servers (vLLM, llama.cpp, Ollama, OpenAI, other gateways) for chat completions and
 * embeddings, with the model's deadlines enforced here rather than trusted to the upstream.
 *
 * - Streaming resolves only once the FIRST chunk has arrived, under `ttft_timeout_s` (504 `ttft_timeout`
 *   otherwise), so the route can still answer with a JSON error before any SSE byte.
 * - `total_timeout_s` covers the whole call, stream included, and aborts the upstream request (504
 *   `deadline_exceeded`); a non-streaming call aborted so returns nothing partial.
 * - The caller's AbortSignal (client disconnect) cancels the upstream request (499 `client_disconnected`).
 * - Connection failures and 502/503/504 answers are retried (`retries`, default 1) while nothing has been
 *   received and the total deadline allows; nothing is retried once a chunk has arrived.
 * Uses the runtime's `fetch` (undici), injectable for tests; never the openai SDK.
 */
import type { AppError } from '../domain/errors';
import { upstreamError } from './gateway-errors';
import type { UpstreamTarget } from './model.types';
import { createHttpFetch } from './http-transport';
import { CallScope, isAppError } from './upstream-call-scope';
import { readSseEvents, type SseEvent } from './sse-parser';
import { mapUpstreamStatus } from './upstream-errors';

/** A JSON object from the upstream: a chat completion, a chunk, or an embeddings response. */
export type UpstreamJson = Record<string, unknown>;

export interface UpstreamCallOptions {
  /** Aborts the upstream call, e.g. when our client disconnects. */
  signal?: AbortSignal;
  /** Streaming only: add `stream_options.include_usage` so the last chunk carries usage for billing (default). */
  includeUsage?: boolean;
}

/** Chunks of a streamed chat completion; `return()` (or breaking a `for await`) cancels the upstream call. */
export type UpstreamStream = AsyncIterableIterator<UpstreamJson>;

export interface UpstreamClient {
  /** POST /chat/completions, not streamed. */
  chat(target: UpstreamTarget, body: UpstreamJson, options?: UpstreamCallOptions): Promise<UpstreamJson>;
  /** POST /chat/completions with `stream: true`; resolves once the first chunk has arrived. */
  streamChat(target: UpstreamTarget, body: UpstreamJson, options?: UpstreamCallOptions): Promise<UpstreamStream>;
  /** POST /embeddings. */
  embeddings(target: UpstreamTarget, body: UpstreamJson, options?: UpstreamCallOptions): Promise<UpstreamJson>;
}

export interface UpstreamClientOptions {
  fetch?: typeof fetch;
  /** Extra attempts after a connection failure or a 502/503/504, before anything was received. */
  retries?: number;
  retryBackoffMs?: number;
  userAgent?: string;
}

export function createUpstreamClient(options: UpstreamClientOptions = {}): UpstreamClient {
  const doFetch = options.fetch ?? createHttpFetch();
  const retries = options.retries ?? 1;
  const backoffMs = options.retryBackoffMs ?? 200;
  const userAgent = options.userAgent ?? 'prism-gateway';

  /** POST and return an OK response, retrying transient failures; throws our error otherwise. */
  const post = async (scope: CallScope, path: string, body: UpstreamJson, accept: string): Promise<Response> => {
    const { target } = scope;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept, 'user-agent': userAgent };
    if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
    const init = { method: 'POST', headers, body: JSON.stringify(body), signal: scope.controller.signal };
    for (let attempt = 0; ; attempt += 1) {
      let failure: AppError;
      try {
        const res = await doFetch(`${target.baseUrl}${path}`, init);
        if (res.ok) return res;
        const text = await res.text();
        failure = mapUpstreamStatus(target.provider, res.status, text, res.headers.get('retry-after'));
        if (![502, 503, 504].includes(res.status)) throw failure;
      } catch (error) {
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
    path: string,
    target: UpstreamTarget,
    body: UpstreamJson,
    options: UpstreamCallOptions,
  ): Promise<UpstreamJson> => {
    const scope = new CallScope(target, options.signal, false);
    try {
      const res = await post(scope, path, body, 'application/json');
      const text = await res.text();
      return parseObject(text, target.provider, 'a reply');
    } catch (error) {
      throw scope.translate(error);
    } finally {
      scope.dispose();
    }
  };

  return {
    chat(target, body, opts = {}) {
      const { stream: _stream, stream_options: _streamOptions, ...rest } = body;
      return unary('/chat/completions', target, { ...rest, model: target.model }, opts);
    },
    embeddings(target, body, opts = {}) {
      return unary('/embeddings', target, { ...body, model: target.model }, opts);
    },
    async streamChat(target, body, opts = {}) {
      const scope = new CallScope(target, opts.signal, true);
      const streamOptions = opts.includeUsage === false ? body.stream_options : usageOn(body.stream_options);
      const payload = { ...body, model: target.model, stream: true, stream_options: streamOptions };
      try {
        const res = await post(scope, '/chat/completions', payload, 'text/event-stream');
        if (!res.body) throw upstreamError(target.provider, 'The upstream sent no body');
        const chunks = chunksOf(readSseEvents(res.body), target.provider);
        const first = await chunks.next();
        if (first.done) throw upstreamError(target.provider, 'The upstream ended the stream without a chunk');
        scope.firstChunkArrived();
        return streamFrom(first.value, chunks, scope);
      } catch (error) {
        scope.dispose();
        scope.controller.abort();
        throw scope.translate(error);
      }
    },
  };
}

/** JSON chunks until `[DONE]`; an upstream error event becomes a 502. */
async function* chunksOf(events: AsyncIterable<SseEvent>, provider: string): AsyncGenerator<UpstreamJson> {
  for await (const event of events) {
    if (event.data === '[DONE]') return;
    const chunk = parseObject(event.data, provider, 'an event');
    if (event.event === 'error' || chunk.error !== undefined) {
      const e = chunk.error as { message?: unknown } | string | undefined;
      const message = typeof e === 'string' ? e : typeof e?.message === 'string' ? e.message : event.data;
      throw upstreamError(provider, `The upstream failed mid-stream: ${message}`);
    }
    yield chunk;
  }
}

function streamFrom(first: UpstreamJson, chunks: AsyncGenerator<UpstreamJson>, scope: CallScope): UpstreamStream {
  let pending: UpstreamJson | null = first;
  let finished = false;
  /** Ends the call; `cancel` also aborts the upstream request (not needed after a clean `[DONE]`). */
  const close = (cancel: boolean): void => {
    if (finished) return;
    finished = true;
    scope.dispose();
    if (!cancel) return;
    scope.controller.abort();
    chunks.return(undefined).catch(() => undefined);
  };
  const iterator: UpstreamStream = {
    async next() {
      if (pending) {
        const value = pending;
        pending = null;
        return { done: false, value };
      }
      if (finished) return { done: true, value: undefined };
      try {
        const next = await chunks.next();
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
  return { ...base, include_usage: true };
}

function parseObject(text: string, provider: string, what: string): UpstreamJson {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw upstreamError(provider, `The upstream sent ${what} that is not JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw upstreamError(provider, `The upstream sent ${what} that is not a JSON object`);
  }
  return value as UpstreamJson;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
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
