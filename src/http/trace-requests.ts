/**
 * The HTTP adapter's spans (docs/operations.md, "Traces"): one server span per request the listener takes (the
 * gateway fast lane's included, which express never sees) and one per WebSocket session, each a child of the
 * caller's `traceparent` when it sends one. Named by the route pattern once the response ends (`POST
 * /v1/agent/execute`), as the metrics label it. With tracing off the listener is returned as it is: no cost.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { runInContext, startServerSpan, tracingOn } from '../lib/tracing';
import { routeOf } from './request-observer';

export function traceRequests(listener: RequestListener): RequestListener {
  if (!tracingOn()) return listener;
  return (req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? 'GET';
    const started = startServerSpan(method, req.headers, {
      'http.request.method': method,
      'url.path': (req.url ?? '').split('?')[0] ?? '',
    });
    if (!started) return listener(req, res);
    res.once('close', () => {
      const route = routeOf(req);
      started.span.updateName(`${method} ${route}`);
      started.span.setAttribute('http.route', route);
      const requestId = res.getHeader('x-request-id');
      if (typeof requestId === 'string') started.span.setAttribute('prism.request_id', requestId);
      if (res.headersSent) {
        started.span.setAttribute('http.response.status_code', res.statusCode);
        if (res.statusCode >= 500) started.span.setStatus({ code: 2 });
      }
      started.span.end();
    });
    runInContext(started.context, () => listener(req, res));
  };
}

/** Wraps the WebSocket upgrade handler: a span for the whole session, ended when its socket closes. */
export function traceUpgrades(
  handle: (req: IncomingMessage, socket: Duplex, head: Buffer) => void,
): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  if (!tracingOn()) return handle;
  return (req, socket, head) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    const started = startServerSpan(`WebSocket ${path}`, req.headers, {
      'url.path': path,
      'network.protocol.name': 'websocket',
    });
    if (!started) return handle(req, socket, head);
    socket.once('close', () => started.span.end());
    runInContext(started.context, () => handle(req, socket, head));
  };
}
