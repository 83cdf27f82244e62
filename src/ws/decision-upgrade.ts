/**
 * Serves `GET /v1/compat/decisions/stream` (and `/v1/openai/...`): the HTTP server's `upgrade` listener.
 *
 * Before the socket becomes a WebSocket the caller is checked exactly as on the gateway's HTTP routes — the same
 * auth service (a key, or anonymous by client address), the same per-caller request budget — and a refusal is
 * written by the one error responder as an ordinary HTTP response (401, 429, 503 …), so clients see the status.
 * Any other upgrade path is a 404. Live connections are tracked so shutdown can end each with `session.closed`.
 *
 * Memory: `ws` buffers a message's fragments until it is complete, up to `maxPayload`, so what a set of
 * sockets can hold is their number times that. A message is capped just above the frame limit (a frame a little
 * over it still arrives whole and is answered with `payload_too_large`; one far over closes the socket with 1009),
 * and streams are capped per caller and in all (429 before the upgrade): at the default 8 MiB frames, at most
 * the server's stream cap (24 by default) × 10 MiB is ever buffered, and a closed socket's buffers go with it.
 */
import http, { type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import proxyaddr from 'proxy-addr';
import { WebSocketServer } from 'ws';
import { AppError } from '../domain/errors';
import type { DecisionsService } from '../gateway/decisions/decisions.service';
import { callerKey } from '../metering/caller-key';
import type { RateLimiter } from '../metering/rate-limiter';
import { enforceRateLimit } from '../metering/enforce-rate-limit';
import type { ErrorResponder } from '../wire/error-body';
import { resolveRequestId } from '../wire/request-id';
import type { Logger } from '../lib/logger';
import type { AuthService } from '../services/auth.service';
import { DECISION_STREAM_PATHS } from './decision-protocol';
import { attachDecisionStream, type DecisionConnection, type DecisionStreamOptions } from './decision-stream';

export interface DecisionUpgradeDeps {
  auth: AuthService;
  limiter: RateLimiter;
  service: DecisionsService;
  respondError: ErrorResponder;
  trustProxy: (addr: string, index: number) => boolean;
  options: DecisionStreamOptions;
  /** Streams per caller and in all (PRISM_DECISION_CALLER_STREAMS, PRISM_DECISION_STREAMS); defaults below. */
  caps?: { perCaller: number; total: number };
  logger: Logger;
}

export interface DecisionUpgrade {
  /** The `upgrade` listener. */
  handle(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Connections open right now. */
  connections(): readonly DecisionConnection[];
  /** End every connection with `session.closed` (`server_shutdown`) and wait for them to close. */
  close(): Promise<void>;
}

const STREAM_PATHS = new Set<string>(DECISION_STREAM_PATHS);
/** Decision streams one caller (key, or client address) may have open at once, by default. */
export const MAX_STREAMS_PER_CALLER = 6;
/** Decision streams this server holds open at once, by default. */
export const MAX_STREAMS = 24;

/** Largest WebSocket message: the frame limit plus a quarter (at least 256 KiB), so an oversized frame is answered. */
export const maxMessageBytes = (maxFrameBytes: number): number =>
  maxFrameBytes + Math.max(256 * 1024, Math.ceil(maxFrameBytes / 4));

const tooManyStreams = (message: string): AppError =>
  new AppError(429, { message, type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', retryAfterSeconds: 5 });

export function createDecisionUpgrade(deps: DecisionUpgradeDeps): DecisionUpgrade {
  // A frame a little over the limit still arrives whole so it can be answered with an error event; a message far
  // beyond it closes the connection with 1009.
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: maxMessageBytes(deps.options.maxFrameBytes),
    perMessageDeflate: false,
  });
  const live = new Set<DecisionConnection>();
  /** Streams open or being opened (counted before the upgrade completes), by caller key and in all. */
  const byCaller = new Map<string, number>();
  let streams = 0;
  const perCaller = deps.caps?.perCaller ?? MAX_STREAMS_PER_CALLER;
  const total = deps.caps?.total ?? MAX_STREAMS;

  /** Write an AppError as the HTTP response to an upgrade request, then drop the socket. */
  const refuse = (req: IncomingMessage, socket: Duplex, error: unknown, requestId: string): void => {
    const res = new http.ServerResponse(req);
    res.assignSocket(socket as never);
    res.shouldKeepAlive = false;
    res.setHeader('x-request-id', requestId);
    res.on('finish', () => {
      res.detachSocket(socket as never);
      socket.end();
    });
    deps.respondError(res, error, requestId, 'gateway');
  };

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const clientIp = proxyaddr(req, deps.trustProxy);
    const principal = await deps.auth.authenticate(req.headers.authorization, { clientIp, surface: 'gateway' });
    await enforceRateLimit(deps.limiter, principal, { setHeader: () => undefined });
    const fingerprint = req.headers['x-prism-fingerprint'];
    const key = callerKey(principal);
    if ((byCaller.get(key) ?? 0) >= perCaller) {
      throw tooManyStreams(`At most ${perCaller} decision streams per caller can be open; close one first.`);
    }
    if (streams >= total) throw tooManyStreams('The server has as many decision streams open as it takes.');
    byCaller.set(key, (byCaller.get(key) ?? 0) + 1);
    streams += 1;
    let counted = true;
    const uncount = (): void => {
      if (!counted) return;
      counted = false;
      streams -= 1;
      const left = (byCaller.get(key) ?? 1) - 1;
      if (left > 0) byCaller.set(key, left);
      else byCaller.delete(key);
    };
    // Counted from here: a socket that closes before the upgrade completes gives its place back too.
    socket.once('close', uncount);
    const caller = {
      principal,
      fingerprint: typeof fingerprint === 'string' ? fingerprint : null,
    };
    wss.handleUpgrade(req, socket, head, (ws) => {
      const connection = attachDecisionStream(ws, {
        service: deps.service,
        caller,
        options: deps.options,
        logger: deps.logger,
      });
      live.add(connection);
      void connection.closed.then(() => {
        live.delete(connection);
        uncount();
      });
    });
  }

  return {
    handle(req, socket, head) {
      const requestId = resolveRequestId(req.headers['x-request-id']);
      const url = req.url ?? '';
      const query = url.indexOf('?');
      const path = query < 0 ? url : url.slice(0, query);
      socket.on('error', () => socket.destroy());
      if (!STREAM_PATHS.has(path)) {
        const notFound = new AppError(404, {
          message: `No WebSocket endpoint at ${path}`,
          type: 'not_found_error',
          code: 'route_not_found',
        });
        refuse(req, socket, notFound, requestId);
        return;
      }
      upgrade(req, socket, head).catch((error: unknown) => refuse(req, socket, error, requestId));
    },
    connections: () => [...live],
    async close() {
      const all = [...live];
      for (const connection of all) connection.end('server_shutdown');
      // Clients get a moment to answer the close handshake; then the sockets are cut.
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, 2000)));
      await Promise.race([Promise.all(all.map((c) => c.closed)), grace]);
      clearTimeout(timer);
      for (const client of wss.clients) client.terminate();
      wss.close();
    },
  };
}
