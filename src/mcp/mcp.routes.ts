/**
 * `/mcp` over Streamable HTTP, stateless: every POST gets a fresh McpServer and transport (the SDK refuses to reuse
 * a stateless transport), answered as an SSE stream so progress notifications reach the client. No session store
 * exists to bound or to share between replicas. GET and DELETE answer 405, as there is no session stream to open
 * or end.
 *
 * Order: Host/Origin check → auth (401 with a challenge, 503 without; every method) → the body's bytes reserved
 * against the caller's and the server's in-flight budget (mcp-budget.ts) → JSON body (its own, larger limit) →
 * batch size and prompt rate limit → server, on the request's work budget (src/lib/work-budget.ts: anonymous or
 * keyed, as on the API), so a schema or bundle sent in a tool call is bounded like the same one sent over REST.
 */
import express, { Router, type Request, type Response } from 'express';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Principal } from '../domain/account';
import { AppError, PayloadTooLargeError } from '../domain/errors';
import { callerKey } from '../metering/caller-key';
import { jsonBytesTooDeep } from '../lib/json-bounds';
import type { Logger } from '../lib/logger';
import type { AuthService } from '../services/auth.service';
import type { McpOAuthService } from '../services/mcp-oauth.service';
import { mcpAuth } from './auth/bearer-auth';
import { PARSE_ERROR, sendJsonRpcError } from './mcp-errors';
import { mcpHostCheck } from './auth/host-check';
import { ICON_PATH, ICON_SVG } from './mcp-icon';
import { checkMessages, createBodyBudget, overBudget } from './mcp-budget';
import { createInFlightCalls, type InFlightCalls } from './mcp-in-flight';
import { createModernMcpHttp, MODERN_REVISION, type ModernMcpHttp } from './mcp-modern-http';
import { traceMcpRequest } from './mcp-request-trace';
import type { McpCallScope } from './mcp-tool';
import type { ToolCallLimiter } from './mcp-rate-limits';
import type { RateLimiter } from '../metering/rate-limiter';
import type { McpServerFactory } from './mcp-server';
import { defaultToolsetsFor, parseToolsets, type McpToolset } from './mcp-toolsets';
import type { SignalBus } from '../signals/signal-bus';
import { prepareSchemas, schemasIn } from '../lib/json-schema';
import { DEFAULT_WORK_LIMITS, requestWorkBudget, runWithWorkBudget, type WorkLimits } from '../lib/work-budget';

export interface McpRoutesOptions {
  factory: McpServerFactory;
  auth: AuthService;
  /** Prism's OAuth authorization server; null when PRISM_MCP_OAUTH is off. */
  oauth: McpOAuthService | null;
  /** What a request without an Authorization header is while OAuth is on (PRISM_MCP_HEADERLESS). */
  headerless: 'challenge' | 'anonymous';
  /** Tool-call budgets by tier (PRISM_MCP_CALLS_PER_MINUTE). */
  limiter: ToolCallLimiter;
  /** The gateway's per-caller budget, which `prompts/get` counts against (mcp-budget.ts). */
  promptLimiter: RateLimiter;
  logger: Logger;
  maxJsonBytes: number;
  /** Deepest JSON nesting a body may have (PRISM_MAX_JSON_DEPTH). */
  maxJsonDepth: number;
  allowedHosts: readonly string[];
  /** Toolsets of a connection that names none (PRISM_MCP_TOOLSETS). */
  defaultToolsets: readonly McpToolset[];
  /** Base URL for links; derived from the request when unset. */
  publicUrl: string | undefined;
  /** Carries cancels to the replica running the call (Redis with several replicas). */
  signals?: SignalBus;
  /**
   * The per-request work budget's limits (PRISM_WORK_BUDGET_ANONYMOUS / _KEYED, src/lib/work-budget.ts): each POST
   * runs on one budget, whatever messages its body holds, as an API request does.
   */
  workBudget?: { anonymous: WorkLimits; keyed: WorkLimits };
}

const TOO_DEEP = 'entity.too.deep';
const OVER_BUDGET = 'entity.over.budget';
/** Bodies in flight on /mcp, in all, as a multiple of the largest one. */
const TOTAL_BODIES = 4;
/**
 * Largest body from a caller without a key: anonymous callers reach the hub tools and resources only, whose
 * arguments are names and short strings, so they never need the media-sized limit (a 60 MB anonymous batch
 * blocked the event loop for seconds just to be parsed).
 */
export const ANONYMOUS_MCP_BYTES = 1024 * 1024;

/** Mounted at `/mcp`, before the API's JSON parser (base64 media needs the larger limit). */
export function mcpRoutes(options: McpRoutesOptions): Router {
  const { logger } = options;
  const inFlight = createInFlightCalls(options.signals);
  const budget = createBodyBudget({ perCaller: options.maxJsonBytes, total: options.maxJsonBytes * TOTAL_BODIES });
  const router = Router();
  const modern = createModernMcpHttp(options.factory.info, options.factory.approvals, {
    maxBodyBytes: options.maxJsonBytes,
  });
  const anonymousLimit = Math.min(ANONYMOUS_MCP_BYTES, options.maxJsonBytes);
  const jsonParser = (limit: number) =>
    express.json({
      limit,
      // Checked on the raw bytes before JSON.parse, as on the API: nothing recursive ever sees a deeper body.
      verify: (req, res, raw) => {
        if (jsonBytesTooDeep(raw, options.maxJsonDepth)) throw Object.assign(new Error(), { type: TOO_DEEP });
        // A chunked body declared no length: it is reserved now, before it is parsed.
        if (req.headers['content-length'] === undefined) reserve(req as Request, res as Response, raw.length);
      },
    });
  const parseKeyed = jsonParser(options.maxJsonBytes);
  const parseAnonymous = jsonParser(anonymousLimit);
  /** Holds `bytes` of the caller's budget until the response closes. @throws when over it. */
  const reserve = (req: Request, res: Response, bytes: number): void => {
    const release = budget.reserve(callerKey(req.principal as Principal), bytes);
    if (!release) throw Object.assign(new Error(), { type: OVER_BUDGET });
    res.on('close', release);
  };
  router.use(mcpHostCheck(options.allowedHosts, logger));
  // The server's icon (mcp-icon.ts), which 2026-07-28 answers link to: public, as any icon is.
  router.get(ICON_PATH, (_req, res) => {
    res.setHeader('Content-Type', 'image/svg+xml');
    res.setHeader('Cache-Control', 'public, max-age=86400');
    res.end(ICON_SVG);
  });
  // Every method is authenticated first: a client probing with GET (mcp-remote) must see the 401 challenge that
  // starts its OAuth flow, not the 405.
  router.use(
    mcpAuth({
      auth: options.auth,
      oauth: options.oauth,
      headerless: options.headerless,
      publicUrl: options.publicUrl,
      allowedHosts: options.allowedHosts,
      logger,
    }),
  );

  router.post(
    '/',
    (req, res, next) => {
      const anonymous = (req.principal as Principal).kind === 'anonymous';
      const limit = anonymous ? anonymousLimit : options.maxJsonBytes;
      const declared = Number(req.headers['content-length']);
      try {
        // A body declared over the limit is refused unread (the parser would drain it first); the connection closes.
        if (declared > limit) {
          res.setHeader('Connection', 'close');
          throw Object.assign(new Error(), { type: 'entity.too.large' });
        }
        if (Number.isFinite(declared) && declared > 0) reserve(req, res, declared);
      } catch (error) {
        sendJsonRpcError(res, bodyError(error, limit), req.requestId, logger);
        return;
      }
      (anonymous ? parseAnonymous : parseKeyed)(req, res, (error?: unknown) => {
        if (!error) return next();
        // The rest of a body over the limit is not read: the connection closes after the answer.
        if ((error as { type?: string }).type === 'entity.too.large') res.setHeader('Connection', 'close');
        const type = (error as { type?: string }).type;
        const code = type === 'entity.parse.failed' || type === TOO_DEEP ? PARSE_ERROR : undefined;
        sendJsonRpcError(res, bodyError(error, limit), req.requestId, logger, code);
      });
    },
    (req, res, next) => {
      checkMessages(req.body, req.principal as Principal, options.promptLimiter).then(
        () => next(),
        (error: unknown) => sendJsonRpcError(res, error, req.requestId, logger),
      );
    },
    (req, res) => {
      // Everything the POST's messages do (tool calls, prompts, their schemas and bundles) spends one budget.
      const keyed = (req.principal as Principal).kind === 'user';
      const limits = options.workBudget ?? DEFAULT_WORK_LIMITS;
      void runWithWorkBudget(requestWorkBudget(limits, keyed), async () => {
        // Large schemas in the messages' arguments compile on a structure worker first (lib/json-schema.ts). No
        // tool an anonymous caller may use takes a schema: its messages are not looked into.
        const schemas = keyed ? schemasIn(req.body) : [];
        if (schemas.length > 0) await prepareSchemas(schemas);
        return serve(req, res, options, inFlight, modern);
      });
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

async function serve(
  req: Request,
  res: Response,
  options: McpRoutesOptions,
  inFlight: InFlightCalls,
  modern: ModernMcpHttp,
): Promise<void> {
  const principal = req.principal as Principal;
  let toolsets: McpToolset[];
  try {
    toolsets = toolsetsOf(req, defaultToolsetsFor(principal, options.defaultToolsets));
  } catch (error) {
    sendJsonRpcError(res, error, req.requestId, options.logger);
    return;
  }
  const caller = callerKey(principal);
  inFlight.cancel(caller, req.body);
  const scope = {
    principal,
    requestId: req.requestId,
    baseUrl: options.publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`,
    logger: options.logger,
    limiter: options.limiter,
    toolsets,
  };
  // The era is chosen per request (mcp-modern-http.ts): the same parts answer in both.
  let isModern: boolean;
  try {
    isModern = await modern.isModern(req);
  } catch (error) {
    sendJsonRpcError(res, error, req.requestId, options.logger);
    return;
  }
  await traceMcpRequest(req, res, eraOf(req, isModern), async () => {
    if (isModern) {
      const abort = new AbortController();
      const forget = inFlight.track(caller, req.body, { close: async () => abort.abort() });
      res.on('close', forget);
      try {
        await modern.serve(req, res, options.factory.parts(scope), {
          baseUrl: scope.baseUrl,
          caller,
          cancel: abort.signal,
        });
      } catch (error) {
        sendJsonRpcError(res, error, req.requestId, options.logger);
      }
      return;
    }
    await serveLegacy(req, res, options, inFlight, scope);
  });
}

/** The protocol version a request is sent for, for the log and spans (2025 clients name theirs in a header). */
function eraOf(req: Request, isModern: boolean): string {
  const header = req.get('mcp-protocol-version');
  if (header) return header.slice(0, 20);
  if (isModern) return MODERN_REVISION;
  const version = (req.body as { params?: { protocolVersion?: unknown } } | undefined)?.params?.protocolVersion;
  return typeof version === 'string' ? version.slice(0, 20) : 'legacy';
}

/** A 2025-era POST: a v1 server and stateless Streamable HTTP transport of its own. */
async function serveLegacy(
  req: Request,
  res: Response,
  options: McpRoutesOptions,
  inFlight: InFlightCalls,
  scope: McpCallScope,
): Promise<void> {
  const caller = callerKey(scope.principal);
  const server = options.factory.create(scope);
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

/** The connection's toolsets: `?toolsets=` on the URL, else the `X-MCP-Toolsets` header, else the default. */
function toolsetsOf(req: Request, fallback: readonly McpToolset[]): McpToolset[] {
  const query = req.query.toolsets;
  if (typeof query === 'string') return parseToolsets(query, fallback, 'toolsets');
  return parseToolsets(req.get('x-mcp-toolsets'), fallback, 'X-MCP-Toolsets');
}

/** The body parser's refusals as AppErrors (too large, not JSON); anything else is unexpected. */
function bodyError(error: unknown, limit: number): unknown {
  const type = (error as { type?: string }).type;
  if (type === 'entity.too.large') {
    return new PayloadTooLargeError(limit);
  }
  if (type === OVER_BUDGET) return overBudget();
  if (type === TOO_DEEP) {
    return new AppError(400, { message: 'Parse error: the body is nested too deeply.', type: 'invalid_request_error' });
  }
  if (type === 'entity.parse.failed') {
    return new AppError(400, { message: 'Parse error: the body is not valid JSON.', type: 'invalid_request_error' });
  }
  return error;
}
