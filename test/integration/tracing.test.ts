/**
 * OpenTelemetry traces: the app started with OTEL_EXPORTER_OTLP_ENDPOINT pointing at an OTLP/HTTP receiver on
 * loopback (this test's, reading the JSON the official exporter sends). A chat call through the openai SDK with a
 * caller's `traceparent` is a child of the caller's span, its model call (GenAI conventions: model, tokens, cost) is
 * a child of the request, and the upstream model receives the model call's span as its parent. An execution with
 * two tool calls (one built-in, one on a remote MCP server) has its run, steps and tool calls linked under the
 * request, and the remote server receives the trace. A call of Prism's own /mcp with the MCP SDK client has its span;
 * a 2026-07-28 tool call whose `_meta` carries a `traceparent` has an MCP span that is that caller span's child.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { connectMcp } from '../helpers/mcp-client';
import { connectModern } from '../helpers/mcp-modern-client';
import { startRemoteMcpServer, type RemoteMcpServer } from '../helpers/remote-mcp-server';
import type { ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, type TestApp } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

interface OtlpJson {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: { spans?: (Omit<ReceivedSpan, 'attributes'> & { attributes?: OtlpAttribute[] })[] }[];
  }[];
}
interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };
}

/** An OTLP/HTTP receiver: keeps every span of every JSON export it is sent, and the services that sent them. */
async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const services = new Set<string>();
  const contentTypes = new Set<string>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      contentTypes.add(String(req.headers['content-type']));
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpJson;
      for (const rs of body.resourceSpans ?? []) {
        for (const a of rs.resource?.attributes ?? []) if (a.key === 'service.name') services.add(valueOf(a));
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            const attributes: Record<string, unknown> = {};
            for (const a of s.attributes ?? []) attributes[a.key] = valueOf(a);
            spans.push({ ...s, parentSpanId: s.parentSpanId ?? '', attributes });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    services,
    contentTypes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function valueOf(a: OtlpAttribute): string {
  const v = a.value;
  return String(v.stringValue ?? v.intValue ?? v.doubleValue ?? v.boolValue ?? '');
}

/** Waits (polling the receiver) until `found` returns something; fails with what arrived if it never does. */
async function waitFor<T>(what: string, spans: ReceivedSpan[], found: () => T | undefined): Promise<T> {
  for (let i = 0; i < 200; i += 1) {
    const value = found();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no ${what} among: ${spans.map((s) => s.name).join(', ')}`);
}

describe('OpenTelemetry traces', () => {
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let remote: RemoteMcpServer;
  let lab: UpstreamApp;
  let app: TestApp;
  let upstream: ScriptedUpstream;
  let key: string;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    remote = await startRemoteMcpServer({ key: 'trace-key', hugeBytes: 10 });
    lab = await startUpstreamApp(
      [
        {
          id: 'prism-orion-2',
          upstreamModel: 'planner-llm',
          parameters: ['tools', 'tool_choice', 'temperature'],
          pricing: { prompt: 1.0, completion: 2.0 },
        },
        { id: 'lab-chat', upstreamModel: 'chat-llm', pricing: { prompt: 1.0, completion: 2.0 } },
      ],
      {
        provider: 'vLLM',
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_SERVICE_NAME: 'prism-under-test',
          PRISM_OTEL_BATCH_MS: '50',
          PRISM_ALLOW_PRIVATE_URLS: '1',
          PRISM_SECRETS_KEY: randomBytes(32).toString('hex'),
        },
      },
    );
    ({ app, upstream } = lab);
    key = await app.createKey('trace-org');
    await app.container.services.accounts.addCredits('trace-org', 5);
  });
  afterAll(async () => {
    await lab.close();
    await remote.close();
    await receiver.close();
  });

  const byId = (id: string) => receiver.spans.find((s) => s.spanId === id);

  it("makes a chat call a child of the caller's traceparent and passes its model call's span upstream", async () => {
    const traceId = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    const client = new OpenAI({
      apiKey: key,
      baseURL: `${app.url}/v1/compat`,
      maxRetries: 0,
      defaultHeaders: { traceparent: `00-${traceId}-${callerSpan}-01` },
    });
    const seen = upstream.requests.length;
    upstream.next({ kind: 'reply', content: 'hello', usage: { prompt_tokens: 12, completion_tokens: 3 } });
    const reply = await client.chat.completions.create({
      model: 'lab-chat',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(reply.choices[0]?.message.content).toBe('hello');

    const request = await waitFor('chat request span', receiver.spans, () =>
      receiver.spans.find((s) => s.traceId === traceId && s.name === 'POST /v1/compat/chat/completions'),
    );
    expect(request.parentSpanId).toBe(callerSpan);
    expect(request.kind).toBe(2); // SERVER
    expect(request.attributes['http.response.status_code']).toBe('201'); // the compat route's status
    const model = await waitFor('model call span', receiver.spans, () =>
      receiver.spans.find((s) => s.traceId === traceId && s.name === 'chat lab-chat'),
    );
    expect(model.parentSpanId).toBe(request.spanId);
    expect(model.kind).toBe(3); // CLIENT
    expect(model.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'lab-chat',
      'gen_ai.usage.input_tokens': '12',
      'gen_ai.usage.output_tokens': '3',
    });
    expect(Number(model.attributes['prism.cost_usd'])).toBeGreaterThan(0);
    const upstreamTraceparent = upstream.requests[seen]?.headers.traceparent;
    expect(upstreamTraceparent).toBe(`00-${traceId}-${model.spanId}-01`);
    expect(receiver.services).toContain('prism-under-test');
    expect([...receiver.contentTypes].every((t) => t.startsWith('application/json'))).toBe(true);
  });

  it('links an execution with a built-in and a remote MCP tool call under its request', async () => {
    const registered = await call(`${app.url}/v1/agent/mcp-servers`, {
      key,
      json: { name: 'tickets', url: remote.url, api_key: 'trace-key' },
    });
    expect(registered.status).toBe(201);
    upstream.next(
      {
        kind: 'reply',
        toolCalls: [
          { id: 'call_a', name: 'tickets__lookup_ticket', arguments: '{"id":"T-1"}' },
          { id: 'call_b', name: 'lookup_hub_domain', arguments: '{"domain":"document.invoice"}' },
        ],
        usage: { prompt_tokens: 100, completion_tokens: 10 },
      },
      { kind: 'reply', content: '```json\n{"answer": "ok"}\n```', usage: { prompt_tokens: 200, completion_tokens: 5 } },
    );
    const traceId = randomBytes(16).toString('hex');
    const res = await call(`${app.url}/v1/agent/execute`, {
      key,
      headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
      json: { model: 'prism-orion-2', config: { prompt: 'Check ticket T-1', mcp_servers: ['tickets'] } },
    });
    expect(((await res.json()) as { status: string }).status).toBe('completed');

    const inTrace = () => receiver.spans.filter((s) => s.traceId === traceId);
    const request = await waitFor('execute request span', receiver.spans, () =>
      inTrace().find((s) => s.name === 'POST /v1/agent/execute'),
    );
    const run = await waitFor('run span', receiver.spans, () =>
      inTrace().find((s) => s.name.startsWith('invoke_agent')),
    );
    expect(run.parentSpanId).toBe(request.spanId);
    expect(run.attributes['prism.execution.status']).toBe('completed');
    const tools = await waitFor('two tool spans', receiver.spans, () => {
      const found = inTrace().filter((s) => s.name.startsWith('execute_tool '));
      return found.length === 2 ? found : undefined;
    });
    expect(tools.map((s) => s.name).sort()).toEqual([
      'execute_tool lookup_hub_domain',
      'execute_tool tickets__lookup_ticket',
    ]);
    for (const tool of tools) expect(tool.parentSpanId).toBe(run.spanId);
    const steps = inTrace().filter((s) => s.name.startsWith('agent step'));
    expect(steps.length).toBe(2);
    for (const step of steps) {
      expect(step.parentSpanId).toBe(run.spanId);
      const modelCall = inTrace().find((s) => s.parentSpanId === step.spanId && s.name === 'chat prism-orion-2');
      expect(modelCall?.attributes['gen_ai.usage.input_tokens']).toMatch(/^(100|200)$/);
    }
    // The remote MCP server got the trace, with the remote tool's span (or one below it) as the parent.
    const remoteTool = tools.find((s) => s.name === 'execute_tool tickets__lookup_ticket');
    expect(remote.traceparents.some((tp) => tp.startsWith(`00-${traceId}-${remoteTool?.spanId}`))).toBe(true);
    expect(byId(request.parentSpanId)).toBeUndefined();
  });

  it("records a span for a call of Prism's own MCP endpoint", async () => {
    const client = await connectMcp(app.url, `Bearer ${key}`);
    await client.listTools();
    await client.close();
    const mcp = await waitFor('MCP request span', receiver.spans, () =>
      receiver.spans.find((s) => s.name === 'POST /mcp'),
    );
    expect(mcp.kind).toBe(2);
  });

  it('makes an MCP tool call a child of the traceparent its _meta carries (2026-07-28, SDK v2 client)', async () => {
    const client = await connectModern(app.url, `Bearer ${key}`);
    const traceId = randomBytes(16).toString('hex');
    const parentId = randomBytes(8).toString('hex');
    try {
      await client.callTool({
        name: 'list_files',
        arguments: {},
        _meta: { traceparent: `00-${traceId}-${parentId}-01` },
      });
    } finally {
      await client.close();
    }
    const span = await waitFor('MCP tool call span', receiver.spans, () =>
      receiver.spans.find((s) => s.name === 'tools/call list_files' && s.traceId === traceId),
    );
    expect(span.parentSpanId).toBe(parentId);
    expect(span.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'mcp.protocol.version': '2026-07-28',
      'gen_ai.tool.name': 'list_files',
    });
  });
});
