/**
 * What an operator runs Prism with: /health and /ready, Prometheus /metrics (requests by route pattern and status,
 * upstream latency and time to first token through the openai SDK, wallet debits by kind of work after billed
 * calls of each kind, MCP tool calls through the MCP SDK client), one log line per request, CORS with preflights
 * that never use a caller's budget, per-tier rate limits, and Retry-After equal to the reset header.
 */
import OpenAI from 'openai';
import { createLogger } from '../../src/lib/logger';
import { connectMcp } from '../helpers/mcp-client';
import { renderReceiptImage } from '../helpers/media-fixtures';
import { call, startTestApp, type TestApp } from '../helpers/test-app';
import { CHAT_PLANNER, startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

const ORIGIN = 'https://app.example';

/** One sample of a metric in Prometheus text: the value of `name{labels…}` whose labels include all of `labels`. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.split(' ').pop());
  }
  return undefined;
}

describe('operations: health, readiness, metrics, request log', () => {
  let lab: UpstreamApp;

  beforeAll(async () => {
    lab = await startUpstreamApp([{ id: 'my-llm', upstreamModel: 'my-llm', parameters: ['stream', 'stream_options'] }]);
  });
  afterAll(() => lab.close());

  it('answers /health and /ready without a key', async () => {
    const health = await call(`${lab.app.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok' });
    const ready = await call(`${lab.app.url}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { storage: 'ok', models: 'ok' } });
  });

  it('counts requests by route pattern and status, and times upstream calls and their first token', async () => {
    const upload = await call(`${lab.app.url}/v1/files?purpose=assistants`, {
      key: lab.app.ownerKey,
      body: (() => {
        const form = new FormData();
        form.append('file', new Blob(['hello']), 'a.txt');
        return form;
      })(),
    });
    const { id } = (await upload.json()) as { id: string };
    expect((await call(`${lab.app.url}/v1/files/${id}`, { key: lab.app.ownerKey })).status).toBe(200);
    expect((await call(`${lab.app.url}/v1/files/${id}`, { key: 'prism_not-a-key' })).status).toBe(401);
    expect((await call(`${lab.app.url}/no/such/route`)).status).toBe(404);

    lab.upstream.forModel('my-llm', {
      kind: 'stream',
      chunks: [{ content: 'Hel' }, { content: 'lo' }],
      firstChunkDelayMs: 120,
      chunkDelayMs: 10,
    });
    const openai = new OpenAI({ apiKey: lab.app.ownerKey, baseURL: `${lab.app.url}/v1/compat`, maxRetries: 0 });
    const stream = await openai.chat.completions.create({
      model: 'my-llm',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Hello');

    const metrics = await call(`${lab.app.url}/metrics`);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    const body = await metrics.text();
    const requests = (route: string, status: string) =>
      sample(body, 'prism_http_requests_total', { method: 'GET', route, status });
    expect(requests('/v1/files/:file_id', '200')).toBe(1);
    expect(requests('unmatched', '404')).toBe(1);
    expect(sample(body, 'prism_http_requests_total', { route: '/v1/compat/chat/completions', status: '200' })).toBe(1);
    expect(
      sample(body, 'prism_http_request_duration_seconds_count', { route: '/v1/files/:file_id', status: '200' }),
    ).toBe(1);
    const host = new URL(lab.upstream.baseUrl).host;
    expect(sample(body, 'prism_upstream_request_duration_seconds_count', { host, status: '200' })).toBe(1);
    expect(sample(body, 'prism_upstream_time_to_first_token_seconds_count', { host })).toBe(1);
    // The first token came after the upstream's 120 ms wait: it is not in the 0.1 s bucket.
    expect(sample(body, 'prism_upstream_time_to_first_token_seconds_bucket', { host, le: '0.1' })).toBe(0);
    for (const gauge of ['prism_gateway_in_flight', 'prism_gateway_queue_waiting', 'prism_jobs_queued']) {
      expect(sample(body, gauge, {})).toBe(0);
    }
    expect(sample(body, 'prism_ocr_pending', {})).toBe(0);
    expect(sample(body, 'prism_websocket_sessions', {})).toBe(0);
  });
});

describe('metrics of money and of MCP', () => {
  let lab: UpstreamApp;

  beforeAll(async () => {
    lab = await startUpstreamApp(
      [{ id: 'my-llm', upstreamModel: 'my-llm' }, CHAT_PLANNER],
      // Extraction is priced here ($0.002 a page), so an extraction debits the wallet as chat calls do.
      { env: { PRISM_EXTRACTION_USD_PER_PAGE: '0.002' } },
    );
  });
  afterAll(() => lab.close());

  it('counts wallet debits and dollars by kind of work and payer after billed calls of each kind', async () => {
    const { url, ownerKey } = lab.app;
    const before = await (await call(`${url}/metrics`)).text();
    expect(sample(before, 'prism_wallet_debits_total', { kind: 'gateway' })).toBeUndefined();

    // gateway: an organisation's chat call (unpriced model: the $0.001 minimum), and a guest's.
    const chat = { model: 'my-llm', messages: [{ role: 'user', content: 'hi' }] };
    expect((await call(`${url}/v1/compat/chat/completions`, { key: ownerKey, json: chat })).status).toBe(201);
    expect((await call(`${url}/v1/compat/chat/completions`, { json: chat })).status).toBe(201);
    // agents: the upstream planner answers at once; 1000 prompt and 100 completion tokens at $2 and $4 per 1M.
    lab.upstream.forModel(CHAT_PLANNER.upstreamModel, {
      kind: 'reply',
      content: '{"greeting": "hello"}',
      usage: { prompt_tokens: 1000, completion_tokens: 100 },
    });
    const execution = await call(`${url}/v1/agent/execute`, {
      key: ownerKey,
      json: { model: 'prism-orion-1', inputs: { note: 'hello' }, config: { prompt: 'Greet back as JSON' } },
    });
    expect(await execution.json()).toMatchObject({ status: 'completed', usage: { cost_dollars: 0.0024 } });
    // extraction: one image is one credit.
    const image = `data:image/png;base64,${renderReceiptImage().toString('base64')}`;
    const extraction = await call(`${url}/v1/image/generate`, {
      key: ownerKey,
      json: { domain: 'document.receipt', images: [image] },
    });
    expect(extraction.status).toBe(201);
    // decisions: the local engine's minimum per decision ($0.0001).
    const decision = await call(`${url}/v1/compat/decisions`, {
      key: ownerKey,
      json: { questions: [{ id: 'text', question: 'Is there text?', type: 'boolean' }], image },
    });
    expect(decision.status).toBe(200);

    const body = await (await call(`${url}/metrics`)).text();
    const debits = (kind: string, payer = 'org') => [
      sample(body, 'prism_wallet_debits_total', { kind, payer }),
      sample(body, 'prism_wallet_debit_dollars_total', { kind, payer }),
    ];
    expect(debits('gateway')).toEqual([1, 0.001]);
    expect(debits('gateway', 'guest')).toEqual([1, 0.001]);
    expect(debits('agents')).toEqual([1, 0.0024]);
    expect(debits('extraction')).toEqual([1, 0.002]);
    expect(debits('decisions')).toEqual([1, 0.0001]);
  });

  it('counts MCP tool calls by tool and outcome, unknown tool names under one label', async () => {
    const client = await connectMcp(lab.app.url, `Bearer ${lab.app.ownerKey}`, { toolsets: 'hub' });
    try {
      const listed = await client.callTool({ name: 'list_hub_domains', arguments: {} });
      expect(listed.isError).toBeFalsy();
      const refused = await client.callTool({ name: 'no_such_tool_42', arguments: {} });
      expect(refused.isError).toBe(true);
    } finally {
      await client.close();
    }
    const body = await (await call(`${lab.app.url}/metrics`)).text();
    expect(sample(body, 'prism_mcp_tool_calls_total', { tool: 'list_hub_domains', outcome: 'ok' })).toBe(1);
    expect(sample(body, 'prism_mcp_tool_calls_total', { tool: 'unknown', outcome: 'error' })).toBe(1);
    expect(body).not.toContain('no_such_tool_42');
  });
});

describe('the request log', () => {
  let app: TestApp;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    const logger = createLogger('info', (line) => void lines.push(JSON.parse(line) as Record<string, unknown>));
    app = await startTestApp({}, undefined, { logger });
  });
  afterAll(() => app.close());

  it('writes one line per request with its id, route, status, duration and organisation', async () => {
    const res = await call(`${app.url}/v1/files`, { key: app.ownerKey, headers: { 'x-request-id': 'req-log-1' } });
    expect(res.status).toBe(200);
    await call(`${app.url}/health`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const logged = lines.filter((l) => l.message === 'request');
    expect(logged).toHaveLength(1); // /health is logged at debug only
    expect(logged[0]).toMatchObject({
      level: 'info',
      request_id: 'req-log-1',
      method: 'GET',
      route: '/v1/files',
      status: 200,
      org: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown,
    });
    expect(typeof logged[0]?.duration_ms).toBe('number');
  });
});

describe('CORS and rate limits', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({
      PRISM_CORS_ORIGINS: `${ORIGIN}, https://other.example`,
      PRISM_RATE_LIMIT_PER_MINUTE: '2',
      PRISM_RATE_LIMIT_TIERS: 'enterprise=4/100',
    });
  });
  afterAll(() => app.close());

  it('answers preflights from allowed origins before the rate limit, and only those', async () => {
    const key = await app.createKey('browser', 'free');
    for (let i = 0; i < 5; i += 1) {
      const preflight = await fetch(`${app.url}/v1/compat/models`, {
        method: 'OPTIONS',
        headers: {
          origin: ORIGIN,
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe(ORIGIN);
      expect(preflight.headers.get('access-control-allow-headers')).toBe('authorization');
    }
    const first = await call(`${app.url}/v1/compat/models`, { key, headers: { origin: ORIGIN } });
    expect(first.status).toBe(200);
    expect(first.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(first.headers.get('access-control-expose-headers')).toContain('x-ratelimit-remaining-requests');
    // Five preflights and one call: one left of the free tier's two.
    expect(first.headers.get('x-ratelimit-remaining-requests')).toBe('1');

    const stranger = await fetch(`${app.url}/v1/compat/models`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
    });
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('gives a tier its own budget, and a 429 whose Retry-After is the reset header', async () => {
    const owner = async () => call(`${app.url}/v1/compat/models`, { key: app.ownerKey });
    for (let i = 0; i < 4; i += 1) expect((await owner()).status).toBe(200);
    const over = await owner();
    expect(over.status).toBe(429);
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(over.headers.get('x-ratelimit-reset-requests')).toBe(`${retryAfter}s`);
    expect(await over.json()).toMatchObject({ error: { message: 'Rate limit exceeded: 4 per 1 minute' } });
  });
});
