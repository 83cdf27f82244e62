/**
 * One structured log line and the HTTP metrics per request, for every request the listener takes (the gateway
 * fast lane's included, which express never sees). Routes are labelled by their pattern (`/v1/files/:id`), never
 * by the raw path, so ids do not become label values; a request no route matched is `unmatched`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Principal } from '../domain/account';
import type { Logger } from '../lib/logger';
import type { Metrics } from '../lib/metrics';

/** What express (or the fast lane) leaves on a request by the time its response ends. */
interface ObservedRequest extends IncomingMessage {
  baseUrl?: string;
  route?: { path?: unknown };
  principal?: Principal;
  /** Set by listeners that serve a fixed path without express (the fast lane). */
  routePattern?: string;
  /** Set by `/mcp` (src/mcp/mcp-request-trace.ts): era, method, tool and the `_meta` trace context. */
  mcp?: Record<string, unknown>;
}

/** Probes and scrapes are logged at debug: at info they would drown the requests people make. */
const QUIET_ROUTES = new Set(['/health', '/ready', '/metrics']);

export function routeOf(req: ObservedRequest): string {
  if (req.routePattern) return req.routePattern;
  const path = req.route?.path;
  if (typeof path === 'string') return `${req.baseUrl ?? ''}${path === '/' && req.baseUrl ? '' : path}` || '/';
  return 'unmatched';
}

export function observeRequest(
  req: IncomingMessage,
  res: ServerResponse,
  deps: { logger: Logger; metrics: Metrics },
): void {
  const started = performance.now();
  res.once('close', () => {
    const observed = req as ObservedRequest;
    const seconds = (performance.now() - started) / 1000;
    const route = routeOf(observed);
    const method = req.method ?? 'GET';
    // A response cut off before its headers went out was never answered with the status it holds.
    const status = res.headersSent ? String(res.statusCode) : 'aborted';
    deps.metrics.httpRequests.inc({ method, route, status });
    deps.metrics.httpDuration.observe({ method, route, status }, seconds);
    const principal = observed.principal;
    const fields = {
      request_id: res.getHeader('x-request-id') ?? null,
      method,
      route,
      path: (req.url ?? '').split('?')[0],
      status: res.headersSent ? res.statusCode : null,
      duration_ms: Math.round(seconds * 10_000) / 10,
      org: principal?.kind === 'user' ? principal.orgId : null,
      ...(res.writableFinished ? {} : { aborted: true }),
      ...(observed.mcp ? { mcp: observed.mcp } : {}),
    };
    if (QUIET_ROUTES.has(route)) deps.logger.debug('request', fields);
    else deps.logger.info('request', fields);
  });
}
