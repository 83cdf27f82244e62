/**
 * Prometheus metrics for operators (`GET /metrics`): one registry per container, so tests that start several apps
 * in one process never share counters. Instruments are fed by small hooks (the request listener, the upstream
 * transport, the WebSocket upgrade, the billers' debit observer, the MCP tool dispatcher); gauges of queues and
 * pools are read at scrape time from `gauges`.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** What the scrape reads at the moment it runs (queues and pools that already count themselves). */
export interface GaugeSources {
  gatewayInFlight?: () => number;
  gatewayWaiting?: () => number;
  jobsQueued?: () => number;
  ocr?: () => { pending: number; reads: number; cancelled: number };
}

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  upstreamDuration: Histogram<'host' | 'status'>;
  upstreamFirstByte: Histogram<'host'>;
  wsSessions: Gauge;
  /** Settled charges over zero, by kind of work (gateway, decisions, extraction, agents) and payer (org, guest). */
  walletDebits: Counter<'kind' | 'payer'>;
  walletDebitDollars: Counter<'kind' | 'payer'>;
  /** MCP `tools/call` requests by tool and outcome (`ok`, or `error` for an `isError` result). */
  mcpToolCalls: Counter<'tool' | 'outcome'>;
  /** Sets where the scrape-time gauges read from (the container calls it once its parts exist). */
  readFrom(sources: GaugeSources): void;
  render(): Promise<string>;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export function createMetrics(options: { processMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry, prefix: 'prism_' });
  let sources: GaugeSources = {};
  const scrapeGauge = (name: string, help: string, read: () => number | undefined): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const value = read();
        if (value !== undefined) this.set(value);
      },
    });
  };
  scrapeGauge('prism_gateway_in_flight', 'Gateway calls running now', () => sources.gatewayInFlight?.());
  scrapeGauge('prism_gateway_queue_waiting', 'Gateway calls waiting for a slot', () => sources.gatewayWaiting?.());
  scrapeGauge('prism_jobs_queued', 'Background jobs (predictions, executions) waiting or running', () =>
    sources.jobsQueued?.(),
  );
  scrapeGauge('prism_ocr_pending', 'OCR reads waiting for a worker', () => sources.ocr?.().pending);
  scrapeGauge('prism_ocr_reads', 'OCR reads run since start', () => sources.ocr?.().reads);
  scrapeGauge(
    'prism_ocr_cancelled',
    'OCR reads dropped because their request was cancelled',
    () => sources.ocr?.().cancelled,
  );
  return {
    registry,
    httpRequests: new Counter({
      name: 'prism_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'prism_http_request_duration_seconds',
      help: 'Time from request to the end of the response, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    upstreamDuration: new Histogram({
      name: 'prism_upstream_request_duration_seconds',
      help: 'Model upstream calls: time to the whole reply (streams: to their last byte), by host and status',
      labelNames: ['host', 'status'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    upstreamFirstByte: new Histogram({
      name: 'prism_upstream_time_to_first_token_seconds',
      help: "Model upstream streams: time to the reply's first body bytes (the first token), by host",
      labelNames: ['host'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    wsSessions: new Gauge({
      name: 'prism_websocket_sessions',
      help: 'WebSocket connections open now (decision streams)',
      registers: [registry],
    }),
    walletDebits: new Counter({
      name: 'prism_wallet_debits_total',
      help: 'Charges debited (an organisation wallet, or a guest daily cap), by kind of work and payer',
      labelNames: ['kind', 'payer'],
      registers: [registry],
    }),
    walletDebitDollars: new Counter({
      name: 'prism_wallet_debit_dollars_total',
      help: 'US dollars debited, by kind of work (gateway, decisions, extraction, agents) and payer (org, guest)',
      labelNames: ['kind', 'payer'],
      registers: [registry],
    }),
    mcpToolCalls: new Counter({
      name: 'prism_mcp_tool_calls_total',
      help: 'MCP tool calls, by tool and outcome (ok, error)',
      labelNames: ['tool', 'outcome'],
      registers: [registry],
    }),
    readFrom(next) {
      sources = { ...sources, ...next };
    },
    render: () => registry.metrics(),
  };
}
