/**
 * The upstream client's transport: one request over undici's dispatcher (keep-alive connection pools per origin),
 * answered as status, lower-cased headers, and a Buffer or a Readable of the body.
 *
 * Why undici's dispatcher and not node:http or `fetch`: the gateway's CPU per call is mostly this hop, and each
 * layer around the bytes costs. `fetch` (WHATWG Request/Response/Headers and web streams) made a bare proxy reach
 * only 0.57–0.73× of calling the upstream directly on the 2-core dev box, against 0.84–0.88× on `http.request`.
 * `http.request` in turn builds a ClientRequest, an IncomingMessage and an agent queue entry per call. Measured
 * with 50 clients against an instant upstream, the gateway pinned to one core: a bare proxy costs 95–100 µs of CPU
 * per call on `http.request` and 86–88 µs on this dispatcher, and the gateway fell from 212–233 µs to 178–208 µs
 * per call with this module alone (same load, runs interleaved; the machine was busier than for the first pair).
 * The handler below receives undici's parser events directly: a unary reply is collected into a Buffer (capped,
 * 64 MiB by default) with no stream object at all, and only a 2xx `text/event-stream` answer gets a Readable, fed
 * with backpressure. Timeouts are off here: the caller's deadlines (CallScope) are the only ones.
 */
import { Readable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import type { CancelSignal } from '../../lib/cancel';

/** Response headers, names lower-cased; a repeated header is an array. */
export type UpstreamHeaders = Record<string, string | string[] | undefined>;

export interface UpstreamRequest {
  method: string;
  /** Sent as given and never modified, so callers may share one object between calls; Content-Length is added. */
  headers: Record<string, string>;
  /** JSON text, or the bytes of a multipart form (audio transcriptions). */
  body: string | Buffer;
  /** Aborting cancels the request, and the response stream if it has started. */
  signal?: CancelSignal;
  /** Called once, when the first body bytes of an event stream arrive (the time to first token, for metrics). */
  onFirstStreamBytes?: () => void;
}

/** A whole reply (any status), or an event stream (status < 300 and `content-type: text/event-stream`). */
export type UpstreamResponse =
  | { status: number; headers: UpstreamHeaders; body: Buffer; stream?: undefined }
  | { status: number; headers: UpstreamHeaders; body?: undefined; stream: Readable };

/** Sends one request; rejects on connection failures, aborts and replies over the size cap. */
export type Transport = (url: URL, init: UpstreamRequest) => Promise<UpstreamResponse>;

/** A reply (not an event stream) larger than the transport reads; the request was abandoned. */
export class ResponseTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`The reply is larger than ${limitBytes} bytes`);
    this.name = 'ResponseTooLargeError';
  }
}

export interface HttpTransportOptions {
  /** Connections kept per upstream origin (default 256). */
  maxSockets?: number;
  /** Largest reply read whole, in bytes (default 64 MiB); event streams are not capped. */
  maxBodyBytes?: number;
}

export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;

const EVENT_STREAM = /text\/event-stream/i;

export function createHttpTransport(options: HttpTransportOptions = {}): Transport {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const dispatcher = new Agent({ connections: options.maxSockets ?? 256, headersTimeout: 0, bodyTimeout: 0 });
  /** Origin and path of each URL, worked out once per URL object (callers reuse theirs). */
  const targets = new WeakMap<URL, { origin: string; path: string }>();

  return (url, init) =>
    new Promise<UpstreamResponse>((resolve, reject) => {
      if (init.signal?.aborted) {
        reject(abortError());
        return;
      }
      let target = targets.get(url);
      if (target === undefined) {
        target = { origin: url.origin, path: url.pathname + url.search };
        targets.set(url, target);
      }
      const exchange = new Exchange(resolve, reject, maxBodyBytes, init.signal, init.onFirstStreamBytes);
      dispatcher.dispatch(
        { origin: target.origin, path: target.path, method: init.method, headers: init.headers, body: init.body },
        exchange,
      );
    });
}

/**
 * One request's answer, built from undici's events: settles the transport's promise once, collects a unary body,
 * or feeds an event stream's Readable (pausing the connection while the reader is behind).
 */
class Exchange implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private finished = false;
  private status = 0;
  private headers: UpstreamHeaders = {};
  private chunks: Buffer[] = [];
  private size = 0;
  private stream: Readable | null = null;
  private readonly onAbort = (): void => this.abort(abortError());

  constructor(
    private readonly resolve: (response: UpstreamResponse) => void,
    private readonly reject: (error: Error) => void,
    private readonly maxBodyBytes: number,
    private readonly signal: CancelSignal | undefined,
    private onFirstStreamBytes: (() => void) | undefined,
  ) {
    signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Aborted while waiting for a connection: the promise has already failed; do not send.
    if (this.finished) controller.abort(abortError());
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    status: number,
    headers: Record<string, string | string[]>,
  ): void {
    if (status < 200) return; // an informational answer; the real one follows
    this.status = status;
    this.headers = headers;
    const type = headers['content-type'];
    if (status < 300 && typeof type === 'string' && EVENT_STREAM.test(type)) {
      this.stream = new Readable({
        read: () => controller.resume(),
        destroy: (error, callback) => {
          // The reader stopped before the end: cancel the request (the connection cannot be reused).
          if (!this.finished) this.abort(error ?? abortError());
          callback(error);
        },
      });
      // Its reader sees errors through the stream's state; this keeps one raised before reading (or while
      // draining) from being an uncaught 'error' event.
      this.stream.on('error', ignore);
      this.resolve({ status, headers, stream: this.stream });
      return;
    }
    if (Number(headers['content-length']) > this.maxBodyBytes) this.abort(new ResponseTooLargeError(this.maxBodyBytes));
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.finished) return;
    if (this.stream !== null) {
      if (this.onFirstStreamBytes !== undefined) {
        const firstBytes = this.onFirstStreamBytes;
        this.onFirstStreamBytes = undefined;
        firstBytes();
      }
      if (!this.stream.push(chunk)) controller.pause();
      return;
    }
    this.size += chunk.length;
    if (this.size > this.maxBodyBytes) this.abort(new ResponseTooLargeError(this.maxBodyBytes));
    else this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.finished) return;
    this.finish();
    if (this.stream !== null) {
      this.stream.push(null);
      return;
    }
    const body = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.size);
    this.resolve({ status: this.status, headers: this.headers, body });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.fail(error);
  }

  /** Cancels the request (closing its connection) and fails the call, or the stream it has become, with `error`. */
  private abort(error: Error): void {
    if (this.finished) return;
    this.fail(error);
    this.controller?.abort(error);
  }

  private fail(error: Error): void {
    if (this.finished) return;
    this.finish();
    if (this.stream !== null) {
      this.stream.destroy(error);
      return;
    }
    this.reject(error);
  }

  private finish(): void {
    this.finished = true;
    this.signal?.removeEventListener('abort', this.onAbort);
  }
}

function ignore(): void {}

function abortError(): Error {
  const error = new Error('The upstream request was aborted');
  error.name = 'AbortError';
  return error;
}
