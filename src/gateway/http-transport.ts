/**
 * The upstream client's transport: a `fetch`-shaped function over node:http(s) with keep-alive agents.
 *
 * Measured on the 2-core dev box with 50 concurrent clients, a bare proxy built on undici's `fetch` reached
 * 0.57–0.73× of calling the upstream directly, the same proxy on `http.request` with a keep-alive agent 0.84–0.88×
 * (`fetch` spends its time in WHATWG stream and header machinery). Unary replies are read whole into a Buffer
 * before the Response is built; event streams are handed over as a stream.
 */
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';

export interface HttpFetchOptions {
  /** Sockets kept per upstream host (default 256). */
  maxSockets?: number;
}

export function createHttpFetch(options: HttpFetchOptions = {}): typeof fetch {
  const agentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? 256, scheduling: 'lifo' as const };
  const agents = { 'http:': new http.Agent(agentOptions), 'https:': new https.Agent(agentOptions) };

  const httpFetch = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
      const client = url.protocol === 'https:' ? https : http;
      const body = typeof init.body === 'string' ? init.body : '';
      const headers: Record<string, string> = {
        ...(init.headers as Record<string, string> | undefined),
        'content-length': String(Buffer.byteLength(body)),
      };
      const signal = init.signal ?? undefined;
      if (signal?.aborted) {
        reject(new Error('aborted'));
        return;
      }
      const req = client.request(
        url,
        { method: init.method ?? 'GET', headers, agent: agents[url.protocol === 'https:' ? 'https:' : 'http:'] },
        (res) => {
          const status = res.statusCode ?? 502;
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
          }
          const streaming = /text\/event-stream/i.test(res.headers['content-type'] ?? '') && status < 300;
          if (streaming) {
            resolve(new Response(Readable.toWeb(res) as ReadableStream, { status, headers: responseHeaders }));
            return;
          }
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve(new Response(Buffer.concat(chunks), { status, headers: responseHeaders })));
          res.on('error', reject);
        },
      );
      const onAbort = (): void => {
        req.destroy(new Error('aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('close', () => signal?.removeEventListener('abort', onAbort));
      req.on('error', reject);
      req.end(body);
    });
  return httpFetch;
}
