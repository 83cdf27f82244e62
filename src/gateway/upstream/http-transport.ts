/**
 * The upstream client's transport: one request over node:http(s) with keep-alive agents, answered in node's own
 * terms (status, IncomingHttpHeaders, a Buffer or the IncomingMessage itself).
 *
 * Why not `fetch`: on the 2-core dev box with 50 concurrent clients, a bare proxy built on undici's `fetch` reached
 * 0.57–0.73× of calling the upstream directly, the same proxy on `http.request` with a keep-alive agent 0.84–0.88×.
 * The first version of this module still dressed node:http up as a `fetch` (Headers, `new Response(Buffer)`,
 * `Readable.toWeb`, `res.text()`); a CPU profile under load then showed that WHATWG Response/Headers/web-stream
 * layer at ~6% of the gateway's busy time, so it was removed (gateway CPU per call in bench/gateway.bench.ts then
 * fell from 325–565 µs to 280–470 µs across its four cases, two runs each). Unary replies are read whole into a
 * Buffer (capped, 64 MiB by default); `text/event-stream` answers below 300 are handed over as the response stream.
 */
import http from 'node:http';
import https from 'node:https';
import { urlToHttpOptions } from 'node:url';
import type { CancelSignal } from '../../lib/cancel';
import { extend } from '../../lib/extend';

export interface UpstreamRequest {
  method: string;
  /** Sent as given and never modified, so callers may share one object between calls; Content-Length is added. */
  headers: http.OutgoingHttpHeaders;
  body: string;
  /** Aborting destroys the request, and the response stream if it has started. */
  signal?: CancelSignal;
}

/** A whole reply (any status), or an event stream (status < 300 and `content-type: text/event-stream`). */
export type UpstreamResponse =
  | { status: number; headers: http.IncomingHttpHeaders; body: Buffer; stream?: undefined }
  | { status: number; headers: http.IncomingHttpHeaders; body?: undefined; stream: http.IncomingMessage };

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
  /** Sockets kept per upstream host (default 256). */
  maxSockets?: number;
  /** Largest reply read whole, in bytes (default 64 MiB); event streams are not capped. */
  maxBodyBytes?: number;
}

export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;

const EVENT_STREAM = /text\/event-stream/i;
const ONCE = { once: true } as const;

/** What `http.request` needs for one URL, worked out once per URL object. */
interface Route {
  client: typeof http | typeof https;
  options: http.RequestOptions;
}

export function createHttpTransport(options: HttpTransportOptions = {}): Transport {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const agentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? 256, scheduling: 'lifo' as const };
  const httpAgent = new http.Agent(agentOptions);
  const httpsAgent = new https.Agent(agentOptions);
  const routes = new WeakMap<URL, Route>();

  const routeFor = (url: URL): Route => {
    let route = routes.get(url);
    if (route === undefined) {
      const secure = url.protocol === 'https:';
      const options = { ...urlToHttpOptions(url), agent: secure ? httpsAgent : httpAgent };
      route = { client: secure ? https : http, options };
      routes.set(url, route);
    }
    return route;
  };

  return (url, init) =>
    new Promise<UpstreamResponse>((resolve, reject) => {
      const { signal } = init;
      if (signal?.aborted) {
        reject(abortError());
        return;
      }
      const route = routeFor(url);
      let response: http.IncomingMessage | undefined;
      const req = route.client.request(extend(route.options, { method: init.method, headers: init.headers }), (res) => {
        response = res;
        const status = res.statusCode ?? 502;
        const { headers } = res;
        if (status < 300 && EVENT_STREAM.test(headers['content-type'] ?? '')) {
          // Its reader sees errors through the stream's state; this keeps one raised before reading (or while
          // draining) from being an uncaught 'error' event.
          res.on('error', ignore);
          resolve({ status, headers, stream: res });
          return;
        }
        res.on('error', reject);
        const declared = Number(headers['content-length']);
        if (declared > maxBodyBytes) {
          tooLarge();
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBodyBytes) tooLarge();
          else chunks.push(chunk);
        });
        res.on('end', () => {
          const only = chunks.length === 1 ? chunks[0] : undefined;
          resolve({ status, headers, body: only ?? Buffer.concat(chunks, size) });
        });
      });
      const tooLarge = (): void => {
        const error = new ResponseTooLargeError(maxBodyBytes);
        reject(error);
        response?.destroy(error);
        req.destroy(error);
      };
      if (signal) {
        const onAbort = (): void => {
          const error = abortError();
          reject(error);
          response?.destroy(error);
          req.destroy(error);
        };
        signal.addEventListener('abort', onAbort, ONCE);
        req.once('close', () => signal.removeEventListener('abort', onAbort));
      }
      req.on('error', reject);
      req.end(init.body);
    });
}

function ignore(): void {}

function abortError(): Error {
  const error = new Error('The upstream request was aborted');
  error.name = 'AbortError';
  return error;
}
