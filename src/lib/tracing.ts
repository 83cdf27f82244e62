/**
 * OpenTelemetry traces (docs/operations.md, "Traces"): with OTEL_EXPORTER_OTLP_ENDPOINT set, Prism exports spans
 * over OTLP/HTTP (JSON) with the official SDK: one per HTTP request and WebSocket session, and inside them the agent
 * run, each planner step (GenAI semantic conventions: model, tokens, cost), each tool call, and queue waits. A
 * caller's `traceparent` is the parent of the request's span, and the current span is passed on to upstream models
 * and remote MCP servers in `traceparent`.
 *
 * Off by default, and then free: every helper here checks one module variable and calls straight through (no span
 * object, no context switch, no header); the SDK is not even loaded (bench/tracing.bench.ts measures both ways).
 * The state is per process, as OpenTelemetry's own global provider is: one tracing set-up for the process.
 */
import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';

export { SpanKind };
export type { Span };

export interface TracingSettings {
  /** The OTLP/HTTP traces URL (`<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`). */
  tracesUrl: string;
  serviceName: string;
  /** Sent with every export (OTEL_EXPORTER_OTLP_HEADERS: a vendor's key). */
  headers: Record<string, string>;
  /** How long finished spans wait to be exported in a batch. */
  batchDelayMs: number;
}

export interface TracingHandle {
  /** Exports what is buffered and stops tracing (spans after this are not recorded). */
  shutdown(): Promise<void>;
}

let tracer: Tracer | null = null;

/** Whether spans are being recorded (OTEL_EXPORTER_OTLP_ENDPOINT set and tracing started). */
export function tracingOn(): boolean {
  return tracer !== null;
}

/** Starts exporting spans; a second start while on returns a handle that does nothing. */
export async function startTracing(settings: TracingSettings): Promise<TracingHandle> {
  if (tracer) return { shutdown: () => Promise.resolve() };
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
    ]);
  const exporter = new OTLPTraceExporter({ url: settings.tracesUrl, headers: settings.headers });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: settings.batchDelayMs })],
  });
  // The AsyncLocalStorage context manager and the W3C trace-context propagator, as globals.
  provider.register();
  tracer = provider.getTracer('prism');
  return {
    async shutdown() {
      tracer = null;
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/**
 * Runs `work` inside a span named `name` (a child of the current span), ending it when `work` settles; a throw
 * marks the span as an error. Off: `work(null)` at once.
 */
export function withSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span | null) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  if (!tracer) return work(null);
  return tracer.startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Records a span that already happened (a queue wait), as a child of the current span. */
export function recordSpan(name: string, startedAt: Date, attributes: Attributes): void {
  if (!tracer) return;
  tracer.startSpan(name, { startTime: startedAt, attributes }).end();
}

/** Marks `span` as failed with a message (a tool's error that is not a throw). */
export function markSpanFailed(span: Span | null, message: string): void {
  span?.setStatus({ code: SpanStatusCode.ERROR, message: message.slice(0, 300) });
}

/**
 * Starts a server span whose parent is the caller's `traceparent` (if any) and returns the context to run the
 * request in; null when tracing is off.
 */
export function startServerSpan(
  name: string,
  headers: Record<string, string | string[] | undefined>,
  attributes: Attributes,
): { span: Span; context: Context } | null {
  if (!tracer) return null;
  const parent = propagation.extract(context.active(), headers);
  const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/** Runs `fn` in `ctx` (a context from startServerSpan). */
export function runInContext<T>(ctx: Context, fn: () => T): T {
  return context.with(ctx, fn);
}

/** `headers` plus the current span's `traceparent` (and `tracestate`); the same object when tracing is off. */
export function withTraceHeaders(headers: Record<string, string>): Record<string, string> {
  if (!tracer) return headers;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return Object.keys(carrier).length === 0 ? headers : { ...headers, ...carrier };
}

function errorMessage(error: unknown): string {
  return (error instanceof Error ? error.message.split('\n')[0] : String(error))?.slice(0, 300) ?? 'error';
}
