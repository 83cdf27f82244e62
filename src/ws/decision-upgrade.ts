/**
 * Serves `GET /v1/compat/decisions/stream` (and `/v1/openai/...`): the HTTP server's `upgrade` listener.
 *
 * Before the socket becomes a WebSocket the caller is checked exactly as on the gateway's HTTP routes — the same
 * auth service (a key, or anonymous by client address), the same per-caller request budget — and a refusal is
 * written by the one error responder as an ordinary HTTP response (401, 429, 503 …), so clients see the status.
 * Any other upgrade path is a 404. Live connections are tracked so shutdown can end each with `session.closed`.
 */
import http, { type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import proxyaddr from 'proxy-addr';
import { WebSocketServer } from 'ws';
import { AppError } from '../domain/errors';
import type { Principal } from '../domain/account';
import type { DecisionsService } from '../gateway/decisions/decisions.service';
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
  payerOrgId: (principal: Principal) => Promise<string | null>;
  respondError: ErrorResponder;
  trustProxy: (addr: string, index: number) => boolean;
  options: DecisionStreamOptions;
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

export function createDecisionUpgrade(deps: DecisionUpgradeDeps): DecisionUpgrade {
  // A frame over the limit still arrives whole so it can be answered with an error event; only a message far
  // beyond it (four times, at least 64 MiB) closes the connection with 1009.
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: Math.max(64 * 1024 * 1024, deps.options.maxFrameBytes * 4),
    perMessageDeflate: false,
  });
  const live = new Set<DecisionConnection>();

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
    const caller = {
      principal,
      payerOrgId: await deps.payerOrgId(principal),
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
      void connection.closed.then(() => live.delete(connection));
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
