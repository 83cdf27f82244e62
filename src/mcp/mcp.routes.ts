/**
 * `/mcp` over Streamable HTTP, stateless: every POST gets a fresh McpServer and transport (the SDK refuses to reuse
 * a stateless transport), answered as an SSE stream so progress notifications reach the client. No session store
 * exists to bound or to share between replicas. GET and DELETE answer 405, as there is no session stream to open
 * or end.
 *
 * Order: Host/Origin check → auth (401 with a challenge, 503 without) → JSON body (its own, larger limit) → server.
 */
import express, { Router, type Request, type Response } from 'express';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Principal } from '../domain/account';
import { AppError, PayloadTooLargeError } from '../domain/errors';
import { callerKey } from '../metering/caller-key';
import type { RateLimiter } from '../metering/rate-limiter';
import { jsonBytesTooDeep } from '../lib/json-bounds';
import type { Logger } from '../lib/logger';
import type { AuthService } from '../services/auth.service';
import { mcpAuth } from './mcp-auth';
import { sendJsonRpcError } from './mcp-errors';
import { mcpHostCheck } from './mcp-host-check';
import { createInFlightCalls, type InFlightCalls } from './mcp-in-flight';
import type { McpServerFactory } from './mcp-server';

export interface McpRoutesOptions {
  factory: McpServerFactory;
  auth: AuthService;
  limiter: RateLimiter;
  logger: Logger;
  maxJsonBytes: number;
  /** Deepest JSON nesting a body may have (PRISM_MAX_JSON_DEPTH). */
  maxJsonDepth: number;
  allowedHosts: readonly string[];
  /** Base URL for links; derived from the request when unset. */
  publicUrl: string | undefined;
}

const TOO_DEEP = 'entity.too.deep';

/** Mounted at `/mcp`, before the API's JSON parser (base64 media needs the larger limit). */
export function mcpRoutes(options: McpRoutesOptions): Router {
  const { logger } = options;
  const inFlight = createInFlightCalls();
  const router = Router();
  const parseJson = express.json({
    limit: options.maxJsonBytes,
    // Checked on the raw bytes before JSON.parse, as on the API: nothing recursive ever sees a deeper body.
    verify: (_req, _res, raw) => {
      if (jsonBytesTooDeep(raw, options.maxJsonDepth)) throw Object.assign(new Error(), { type: TOO_DEEP });
    },
  });
  router.use(mcpHostCheck(options.allowedHosts, logger));

  router.post(
    '/',
    mcpAuth(options.auth, logger),
    (req, res, next) => {
      parseJson(req, res, (error?: unknown) =>
        error ? sendJsonRpcError(res, bodyError(error, options.maxJsonBytes), req.requestId, logger) : next(),
      );
    },
    (req, res) => {
      void serve(req, res, options, inFlight);
    },
  );

  router.all('/', (req, res) => {
    res.setHeader('Allow', 'POST');
    sendJsonRpcError(
      res,
      new AppError(405, {
        message: 'Method not allowed: /mcp is stateless, POST only.',
        type: 'invalid_request_error',
      }),
      req.requestId,
      logger,
    );
  });
  return router;
}

async function serve(req: Request, res: Response, options: McpRoutesOptions, inFlight: InFlightCalls): Promise<void> {
  const principal = req.principal as Principal;
  const caller = callerKey(principal);
  inFlight.cancel(caller, req.body);
  const server = options.factory.create({
    principal,
    requestId: req.requestId,
    baseUrl: options.publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`,
    logger: options.logger,
    limiter: options.limiter,
  });
  // No sessionIdGenerator: stateless.
  const transport = new StreamableHTTPServerTransport({});
  const forget = inFlight.track(caller, req.body, server);
  res.on('close', () => {
    forget();
    void transport.close();
    void server.close();
  });
  try {
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  } catch (error) {
    sendJsonRpcError(res, error, req.requestId, options.logger);
  }
}

/** The body parser's refusals as AppErrors (too large, not JSON); anything else is unexpected. */
function bodyError(error: unknown, limit: number): unknown {
  const type = (error as { type?: string }).type;
  if (type === 'entity.too.large') {
    return new PayloadTooLargeError(limit);
  }
  if (type === TOO_DEEP) {
    return new AppError(400, { message: 'Parse error: the body is nested too deeply.', type: 'invalid_request_error' });
  }
  if (type === 'entity.parse.failed') {
    return new AppError(400, { message: 'Parse error: the body is not valid JSON.', type: 'invalid_request_error' });
  }
  return error;
}
