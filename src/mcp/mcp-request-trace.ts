/**
 * What the request log and the traces learn about one `/mcp` POST: its era, its JSON-RPC method, the tool it calls,
 * and the trace context the client put in `_meta` (`traceparent` / `tracestate`, the keys the MCP spec reserves for
 * W3C Trace Context, SEP-414). An MCP client's trace reaches Prism in `_meta` rather than in HTTP headers (stdio has
 * none, and a host may proxy many calls over one connection), so:
 * - the request log line of the POST carries `mcp: {era, method, tool, trace_id, parent_span_id}`;
 * - with tracing on, the POST's work runs in a span `tools/call <tool>` (OpenTelemetry's MCP conventions:
 *   `mcp.method.name`, `mcp.protocol.version`, `gen_ai.tool.name`) whose parent is the `_meta` trace context when
 *   one is sent, else the HTTP request's span.
 */
import type { Request, Response } from 'express';
import { runInContext, SpanKind, startServerSpan, tracingOn, withSpan } from '../lib/tracing';

/** A `traceparent` header value: version, 32 hex trace id, 16 hex parent span id, flags. */
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

export interface McpRequestFacts {
  era: string;
  method: string | null;
  tool?: string;
  trace_id?: string;
  parent_span_id?: string;
}

interface TraceMeta {
  traceparent?: string;
  tracestate?: string;
}

/** The facts of a body (the first message of a batch), and its `_meta` trace context if well formed. */
export function mcpRequestFacts(body: unknown, era: string): { facts: McpRequestFacts; trace: TraceMeta | null } {
  const first = (Array.isArray(body) ? body[0] : body) as
    { method?: unknown; params?: { name?: unknown; _meta?: Record<string, unknown> } } | undefined;
  const method = typeof first?.method === 'string' ? first.method.slice(0, 100) : null;
  const facts: McpRequestFacts = { era, method };
  if (method === 'tools/call' && typeof first?.params?.name === 'string') facts.tool = first.params.name.slice(0, 100);
  const meta = first?.params?._meta;
  const traceparent = typeof meta?.traceparent === 'string' ? meta.traceparent.trim().toLowerCase() : '';
  const found = TRACEPARENT.exec(traceparent);
  if (!found) return { facts, trace: null };
  facts.trace_id = found[1] ?? '';
  facts.parent_span_id = found[2] ?? '';
  const tracestate = typeof meta?.tracestate === 'string' ? meta.tracestate.slice(0, 512) : undefined;
  return { facts, trace: { traceparent, ...(tracestate ? { tracestate } : {}) } };
}

/** Leaves the facts on the request for its log line (src/http/request-observer.ts). */
export interface McpObservedRequest {
  mcp?: McpRequestFacts;
}

/**
 * Runs `serve` for one POST: records the facts for the log, and with tracing on, inside the MCP span (ended when
 * the response closes). Off: `serve()` at once.
 */
export function traceMcpRequest(req: Request, res: Response, era: string, serve: () => Promise<void>): Promise<void> {
  const { facts, trace } = mcpRequestFacts(req.body, era);
  (req as McpObservedRequest).mcp = facts;
  if (!tracingOn()) return serve();
  const name = [facts.method ?? 'mcp', facts.tool].filter(Boolean).join(' ');
  const attributes = {
    'mcp.method.name': facts.method ?? '',
    'mcp.protocol.version': era,
    ...(facts.tool ? { 'gen_ai.tool.name': facts.tool } : {}),
    'prism.request_id': req.requestId,
  };
  if (!trace) return withSpan(name, attributes, () => serve(), SpanKind.SERVER);
  const started = startServerSpan(name, { ...trace }, attributes);
  if (!started) return serve();
  res.once('close', () => started.span.end());
  return runInContext(started.context, serve);
}
