/**
 * An agent using another MCP server in the 2026-07-28 era: the remote server here is built with the official SDK's
 * v2 server (`createMcpHandler`, serving both eras from one factory that records which era each request was), behind
 * a bearer key. Prism's client (src/lib/remote-mcp-client.ts, the SDK's v2 client in `auto` negotiation) lists its
 * tools and calls one for a run in the modern era, with no initialize; a 2025 server is still reached by the
 * fallback (agent-mcp-servers.test.ts runs against one).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import type { ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, type TestApp } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

const KEY = 'modern-remote-key-123456';

/** A v2 MCP server on loopback with one tool; `eras` lists the era of every server instance the SDK built. */
async function startModernRemote(): Promise<{ url: string; eras: string[]; close(): Promise<void> }> {
  const eras: string[] = [];
  const handler = createMcpHandler((ctx) => {
    eras.push(ctx.era);
    const server = new McpServer({ name: 'tickets-2026', version: '1.0.0' });
    server.registerTool(
      'lookup_ticket',
      { description: 'The state of a ticket', inputSchema: z.object({ id: z.string() }) },
      ({ id }) => ({ content: [{ type: 'text', text: `Ticket ${id} is OPEN (modern server)` }] }),
    );
    return server;
  });
  const node = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.headers.authorization !== `Bearer ${KEY}`) return void res.writeHead(401).end();
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === 'string') headers.set(name, value);
      }
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const request = new Request(`http://127.0.0.1${req.url ?? '/'}`, {
        method: req.method ?? 'GET',
        headers,
        ...(body && req.method === 'POST' ? { body } : {}),
      });
      void handler.fetch(request).then(async (response) => {
        res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
        res.end(Buffer.from(await response.arrayBuffer()));
      });
    });
  });
  await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(node.address() as AddressInfo).port}/mcp`,
    eras,
    close: async () => {
      await handler.close();
      await new Promise((resolve) => node.close(resolve));
    },
  };
}

describe('an agent using a 2026-07-28 MCP server', () => {
  let remote: Awaited<ReturnType<typeof startModernRemote>>;
  let lab: UpstreamApp;
  let app: TestApp;
  let upstream: ScriptedUpstream;
  let key: string;

  beforeAll(async () => {
    remote = await startModernRemote();
    lab = await startUpstreamApp(
      [
        {
          id: 'prism-orion-2',
          upstreamModel: 'planner-llm',
          parameters: ['tools', 'tool_choice', 'temperature'],
          pricing: { prompt: 1.0, completion: 1.0 },
        },
      ],
      { provider: 'vLLM', env: { PRISM_ALLOW_PRIVATE_URLS: '1', PRISM_SECRETS_KEY: randomBytes(32).toString('hex') } },
    );
    ({ app, upstream } = lab);
    key = await app.createKey('modern-remote-org');
    await app.container.services.accounts.addCredits('modern-remote-org', 5);
  });
  afterAll(async () => {
    await lab.close();
    await remote.close();
  });

  it('lists and calls its tool in the modern era, with no initialize', async () => {
    const registered = await call(`${app.url}/v1/agent/mcp-servers`, {
      key,
      json: { name: 'tickets', url: remote.url, api_key: KEY },
    });
    expect(registered.status).toBe(201);
    upstream.next(
      { kind: 'reply', toolCalls: [{ id: 'c1', name: 'tickets__lookup_ticket', arguments: '{"id": "T-7"}' }] },
      { kind: 'reply', content: '```json\n{"answer": "open"}\n```' },
    );
    const execution = (await (
      await call(`${app.url}/v1/agent/execute`, {
        key,
        json: { model: 'prism-orion-2', config: { prompt: 'State of T-7?', mcp_servers: ['tickets'] } },
      })
    ).json()) as { status: string; steps: { name: string; error: string | null }[] };
    expect(execution.status).toBe('completed');
    const step = execution.steps.find((s) => s.name === 'tickets__lookup_ticket');
    expect(step?.error ?? null).toBeNull();
    expect(JSON.stringify(upstream.requests.at(-1))).toContain('Ticket T-7 is OPEN (modern server)');
    expect(remote.eras.length).toBeGreaterThan(0);
    expect(new Set(remote.eras)).toEqual(new Set(['modern']));
  });
});
