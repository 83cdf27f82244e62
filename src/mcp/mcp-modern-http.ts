/**
 * The 2026-07-28 era on `/mcp`, beside the 2025 one, chosen per request as the spec says: a request whose body
 * carries the per-request `_meta` envelope claim (or whose `MCP-Protocol-Version` names a modern revision) is
 * modern; everything else (the `initialize` handshake, 2025 requests, batches) stays on the 2025 path. The decision
 * is the v2 SDK's own (`isLegacyRequest`, the predicate its `createMcpHandler` routes with), so the two never
 * disagree.
 *
 * Modern requests are answered by the v2 SDK's `createMcpHandler` in strict mode (`legacy: 'reject'`): it checks
 * the envelope, the `MCP-Protocol-Version` / `Mcp-Method` / `Mcp-Name` headers against the body, answers
 * `server/discover`, fills `ttlMs` / `cacheScope`, and serves each request on a fresh server from the caller's
 * parts. Nothing is kept between requests, so any replica answers any request. Auth, the Host check, body limits,
 * toolsets and the work budget ran before this (mcp.routes.ts), the same for both eras; the caller's parts travel
 * to the handler's factory in `authInfo.extra`, which the SDK passes through untouched.
 */
import { Readable } from 'node:stream';
import type { Request as ExpressRequest, Response as ExpressResponse } from 'express';
import { createMcpHandler, isLegacyRequest, type AuthInfo, type RequestStateCodec } from '@modelcontextprotocol/server';
import type { ApprovalState } from './mcp-approvals';
import { linkedIcons } from './mcp-icon';
import { createModernServer } from './mcp-modern-server';
import type { McpCallerParts, McpServerInfo } from './mcp-server';

/** Headers that describe the Express request's own body, which the web Request does not carry (it is parsed). */
const BODY_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'expect']);

/** The revision this era serves. */
export const MODERN_REVISION = '2026-07-28';

const PARTS = 'prism.parts';
const BASE_URL = 'prism.baseUrl';

export interface ModernMcpHttp {
  /** Whether the request belongs to the 2026-07-28 era (the SDK's classification of its parsed body and headers). */
  isModern(req: ExpressRequest): Promise<boolean>;
  /**
   * Answers a modern request for the caller `parts` serve; resolves when the response has ended. `cancel` aborts
   * the request's handlers (a `notifications/cancelled` naming it), as the client going away does; `baseUrl` is
   * where the server's icon link points; `caller` (the principal's caller key) is what approval states are bound to.
   */
  serve(
    req: ExpressRequest,
    res: ExpressResponse,
    parts: McpCallerParts,
    options: { baseUrl: string; caller: string; cancel?: AbortSignal },
  ): Promise<void>;
}

export function createModernMcpHttp(
  info: McpServerInfo,
  approvals: RequestStateCodec<ApprovalState>,
  options: { maxBodyBytes: number; onerror?: (error: Error) => void },
): ModernMcpHttp {
  const handler = createMcpHandler(
    (ctx) => {
      const extra = ctx.authInfo?.extra ?? {};
      return createModernServer(
        info,
        extra[PARTS] as McpCallerParts,
        approvals,
        linkedIcons(extra[BASE_URL] as string),
      );
    },
    {
      legacy: 'reject',
      // JSON unless a call sends progress first, then SSE: what the spec's Streamable HTTP binding describes.
      responseMode: 'auto',
      maxRequestBodySize: options.maxBodyBytes,
      ...(options.onerror ? { onerror: options.onerror } : {}),
    },
  );
  return {
    async isModern(req) {
      return !(await isLegacyRequest(webRequestOf(req), req.body, { maxRequestBodySize: options.maxBodyBytes }));
    },
    async serve(req, res, parts, { baseUrl, caller, cancel }) {
      const abort = new AbortController();
      res.on('close', () => abort.abort());
      cancel?.addEventListener('abort', () => abort.abort(), { once: true });
      const authInfo: AuthInfo = {
        token: '',
        clientId: caller,
        scopes: [],
        extra: { [PARTS]: parts, [BASE_URL]: baseUrl },
      };
      const response = await handler.fetch(webRequestOf(req, abort.signal), { authInfo, parsedBody: req.body });
      await writeResponse(response, res);
    },
  };
}

/** A body-less web Request with the Express request's URL, method and headers (the body is passed parsed). */
function webRequestOf(req: ExpressRequest, signal?: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || BODY_HEADERS.has(name)) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const url = new URL(req.originalUrl, `${req.protocol}://${req.get('host') ?? 'localhost'}`);
  return new Request(url, { method: req.method, headers, ...(signal ? { signal } : {}) });
}

/** Copies the SDK's web Response (a JSON body or an SSE stream) onto the Express response. */
async function writeResponse(response: Response, res: ExpressResponse): Promise<void> {
  res.status(response.status);
  response.headers.forEach((value, name) => res.setHeader(name, value));
  if (!response.body) {
    res.end();
    return;
  }
  const body = Readable.fromWeb(response.body);
  res.on('close', () => body.destroy());
  await new Promise<void>((resolve) => {
    body.on('error', () => {
      res.destroy();
      resolve();
    });
    body.pipe(res).on('finish', resolve).on('close', resolve);
  });
}
