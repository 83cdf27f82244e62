/**
 * `/mcp` at the 2026-07-28 revision, with the official SDK's v2 client (`@modelcontextprotocol/client`) against the
 * running app: it negotiates the modern era by `server/discover` (no initialize, no session), runs an extraction
 * and tool calls with the same answers and errors as the 2025 era (the v1 client on the same app), sees cache hints
 * on the lists, the server's title and icon; raw requests check the required headers; the same v2 client in its
 * legacy mode still gets 2025-11-25; two replicas on one database answer one client's requests alternately; the
 * request log names the era, method, tool and the trace context a call's `_meta` carries.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { loadConfig } from '../../../src/config/config';
import { startServer } from '../../../src/http-server';
import { createLogger } from '../../../src/lib/logger';
import type { Client as ModernClient, FetchLike } from '@modelcontextprotocol/client';
import { renderReceiptImage } from '../../helpers/media-fixtures';
import { connectMcp, toolError, toolOutput } from '../../helpers/mcp-client';
import { connectModern, MODERN } from '../../helpers/mcp-modern-client';
import { startReplicas, type Replicas } from '../../helpers/replicas';
import { call, startTestApp, type TestApp } from '../../helpers/test-app';

// OCR runs on the embedded engine; on a shared, loaded machine one run can take well over the default 30 s.
jest.setTimeout(120_000);

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** A raw modern request: the envelope in `_meta` and the standard headers (unless `omit` names some). */
function modernRequest(method: string, params: Record<string, unknown> = {}, omit: string[] = []) {
  const headers: Record<string, string> = {
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
  };
  if (typeof params.name === 'string') headers['mcp-name'] = params.name;
  for (const name of omit) delete headers[name];
  return { json: { jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: ENVELOPE } }, headers };
}

async function rpc(res: Response): Promise<Record<string, unknown>> {
  const text = await res.text();
  const data = text.split('\n').find((line) => line.startsWith('data: '));
  return JSON.parse(data ? data.slice(6) : text) as Record<string, unknown>;
}

const structured = (result: unknown): Record<string, unknown> => toolOutput(result as CallToolResult);

describe('/mcp at 2026-07-28 (SDK v2 client)', () => {
  let app: TestApp;
  let key: string;
  let client: ModernClient;

  beforeAll(async () => {
    app = await startTestApp();
    key = await app.createKey('mcp-modern', 'pro');
    client = await connectModern(app.url, `Bearer ${key}`);
  });
  afterAll(async () => {
    await client.close();
    await app.close();
  });

  it('negotiates 2026-07-28 by server/discover, with the server title, icon and instructions', async () => {
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    const server = client.getServerVersion();
    expect(server).toMatchObject({ name: 'prism', title: 'Prism' });
    expect(server?.icons?.[0]).toMatchObject({ mimeType: 'image/svg+xml' });
    // Linked, not inline: the modern era stamps the server's identity on every answer.
    const icon = await fetch(String(server?.icons?.[0]?.src));
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    expect(await icon.text()).toMatch(/^<svg /);
    expect(client.getInstructions()).toMatch(/run_skill/);
  });

  it('lists the same default tools as the 2025 era, titled, within 16 KB, cached privately', async () => {
    const legacy = await connectMcp(app.url, `Bearer ${key}`);
    try {
      const modern = await client.listTools();
      const old = await legacy.listTools();
      expect(modern.tools.map((t) => t.name)).toEqual(old.tools.map((t) => t.name));
      expect(modern.tools.map((t) => t.name)).toEqual(
        expect.arrayContaining(['extract_image', 'run_skill', 'execute_agent', 'get_execution', 'upload_file']),
      );
      for (const tool of modern.tools) expect(tool.title).toEqual(expect.any(String));
    } finally {
      await legacy.close();
    }
    const raw = await rpc(await call(`${app.url}/mcp`, { key, ...modernRequest('tools/list') }));
    const result = raw.result as Record<string, unknown>;
    // Tool lists differ per caller (toolsets, keyed or anonymous): private.
    expect(result.cacheScope).toBe('private');
    expect(result.ttlMs).toBeGreaterThan(0);
    expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThanOrEqual(16 * 1024);
  });

  it('answers server/discover with the modern revision and public cache hints; the prompts are public too', async () => {
    const raw = await rpc(await call(`${app.url}/mcp`, { key, ...modernRequest('server/discover') }));
    const result = raw.result as Record<string, unknown>;
    expect(result.supportedVersions).toContain(MODERN);
    expect(result).toMatchObject({
      cacheScope: 'public',
      capabilities: { tools: {}, resources: {}, prompts: {} },
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'prism', title: 'Prism' } },
    });
    // No listChanged: nothing would ever send it.
    expect(JSON.stringify(result.capabilities)).not.toMatch(/listChanged/);
    const prompts = (await rpc(await call(`${app.url}/mcp`, { key, ...modernRequest('prompts/list') })))
      .result as Record<string, unknown>;
    expect(prompts).toMatchObject({ cacheScope: 'public' });
    expect((prompts.prompts as unknown[]).length).toBeGreaterThan(0);
  });

  it('refuses a modern request without its Mcp-Method or Mcp-Name header, and without a key as the 2025 era does', async () => {
    const noMethod = await call(`${app.url}/mcp`, { key, ...modernRequest('tools/list', {}, ['mcp-method']) });
    expect(noMethod.status).toBe(400);
    expect(((await rpc(noMethod)).error as { message: string }).message).toMatch(/Mcp-Method/);
    const noName = await call(`${app.url}/mcp`, {
      key,
      ...modernRequest('tools/call', { name: 'list_files', arguments: {} }, ['mcp-name']),
    });
    expect(noName.status).toBe(400);
    expect(((await rpc(noName)).error as { message: string }).message).toMatch(/Mcp-Name/);
    const unknownKey = await call(`${app.url}/mcp`, { key: 'pk_nope', ...modernRequest('tools/list') });
    expect(unknownKey.status).toBe(401);
    expect(unknownKey.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('runs an extraction whose prediction the 2025 era and REST read back the same', async () => {
    const data = `data:image/png;base64,${renderReceiptImage().toString('base64')}`;
    const seen: unknown[] = [];
    const prediction = structured(
      await client.callTool(
        { name: 'extract_image', arguments: { data, domain: 'document.receipt' } },
        { onprogress: (p) => seen.push(p), resetTimeoutOnProgress: true, timeout: 110_000 },
      ),
    );
    expect(prediction.status).toBe('completed');
    expect(JSON.stringify(prediction.response)).toMatch(/GREENLEAF/i);
    const legacy = await connectMcp(app.url, `Bearer ${key}`);
    try {
      const again = toolOutput(
        (await legacy.callTool({ name: 'get_prediction', arguments: { id: prediction.id } })) as CallToolResult,
      );
      expect(again).toEqual(prediction);
    } finally {
      await legacy.close();
    }
    const rest = (await (await call(`${app.url}/v1/predictions/${String(prediction.id)}`, { key })).json()) as {
      id: string;
    };
    expect(rest.id).toBe(prediction.id);
  });

  it('answers errors as the 2025 era does: the spec code in an isError result, the toolset hint, the account rule', async () => {
    const missing = toolError(
      (await client.callTool({ name: 'get_prediction', arguments: { id: 'nope' } })) as CallToolResult,
    );
    expect(missing).toMatchObject({ code: 'prediction_not_found', status: 404 });
    const outside = (await client.callTool({ name: 'list_skills', arguments: {} })) as CallToolResult;
    expect(outside.isError).toBe(true);
    expect(JSON.stringify(outside.content)).toMatch(/'skills' toolset/);
    const anonymous = await connectModern(app.url, 'Bearer prism');
    try {
      expect(anonymous.getNegotiatedProtocolVersion()).toBe(MODERN);
      const names = (await anonymous.listTools()).tools.map((t) => t.name);
      expect(names).toContain('list_hub_domains');
      expect(names).not.toContain('extract_image');
      const refused = toolError((await anonymous.callTool({ name: 'list_files', arguments: {} })) as CallToolResult);
      expect(refused).toMatchObject({ code: 'missing_api_key', status: 401 });
    } finally {
      await anonymous.close();
    }
  });

  it('reads resources in the modern era (a hub schema); an unknown one is -32602 with data.uri, as 2026-07-28 says', async () => {
    const listed = await client.listResources();
    const first = listed.resources.find((r) => r.uri.startsWith('hub://domains/'));
    expect(first).toBeDefined();
    const read = await client.readResource({ uri: first!.uri });
    expect(read.contents[0]).toMatchObject({ uri: first!.uri, mimeType: 'application/schema+json' });
    await expect(client.readResource({ uri: 'hub://domains/nope/schema' })).rejects.toMatchObject({
      code: -32602,
      data: { uri: 'hub://domains/nope/schema' },
    });
  });

  it('keeps the 2025 era for the same v2 client in legacy mode', async () => {
    const legacy = await connectModern(app.url, `Bearer ${key}`, { mode: 'legacy' });
    try {
      expect(legacy.getNegotiatedProtocolVersion()).toBe('2025-11-25');
      const files = structured(await legacy.callTool({ name: 'list_files', arguments: {} }));
      expect(Array.isArray(files.items)).toBe(true);
    } finally {
      await legacy.close();
    }
  });
});

describe('/mcp at 2026-07-28 on two replicas', () => {
  let replicas: Replicas;

  beforeAll(async () => {
    replicas = await startReplicas(2, {});
  });
  afterAll(async () => {
    await replicas.close();
  });

  it('answers one client whose requests alternate between the replicas, with no shared session', async () => {
    const [a, b] = replicas.apps as [TestApp, TestApp];
    const key = await a.createKey('mcp-replicas', 'pro');
    const hits = [0, 0];
    let next = 0;
    // Each request goes to the other replica than the last one, as a round-robin balancer sends them.
    const alternate: FetchLike = (url, init) => {
      const target = next % 2;
      next += 1;
      hits[target] = (hits[target] ?? 0) + 1;
      const moved = new URL(String(url));
      moved.port = new URL(target === 0 ? a.url : b.url).port;
      return fetch(moved, init);
    };
    const client = await connectModern(a.url, `Bearer ${key}`, { mode: 'pin', fetch: alternate });
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain('upload_file');
      const uploaded = structured(
        await client.callTool({
          name: 'upload_file',
          arguments: { data: Buffer.from('hello replicas').toString('base64'), filename: 'hello.txt' },
        }),
      );
      const fetched = structured(await client.callTool({ name: 'get_file', arguments: { file_id: uploaded.id } }));
      expect(fetched).toMatchObject({ id: uploaded.id, filename: 'hello.txt' });
      const listed = structured(await client.callTool({ name: 'list_files', arguments: {} }));
      expect(JSON.stringify(listed)).toContain(String(uploaded.id));
    } finally {
      await client.close();
    }
    // Both replicas answered, neither more than one request ahead of the other.
    expect(hits[0]).toBeGreaterThanOrEqual(2);
    expect(Math.abs((hits[0] ?? 0) - (hits[1] ?? 0))).toBeLessThanOrEqual(1);
  });
});

describe('/mcp request log', () => {
  it('names the era, method, tool and the _meta trace context of each POST', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-mcp-log-'));
    const lines: Record<string, unknown>[] = [];
    const config = loadConfig({ PRISM_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', PRISM_LOG_LEVEL: 'info' });
    const logger = createLogger('info', (line) => void lines.push(JSON.parse(line) as Record<string, unknown>));
    const server = await startServer(config, { announce: () => undefined, logger });
    try {
      const key = fs.readFileSync(config.data.ownerKeyPath, 'utf8').trim();
      const client = await connectModern(server.url, `Bearer ${key}`);
      await client.callTool({
        name: 'list_files',
        arguments: {},
        _meta: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
      });
      await client.close();
      const legacy = await connectMcp(server.url, `Bearer ${key}`);
      await legacy.listTools();
      await legacy.close();
      const mcp = (): Record<string, unknown>[] =>
        lines.filter((l) => l.message === 'request' && l.route === '/mcp').map((l) => l.mcp as Record<string, unknown>);
      for (let i = 0; i < 100 && mcp().length < 4; i += 1) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(mcp()).toEqual(
        expect.arrayContaining([
          { era: MODERN, method: 'server/discover' },
          {
            era: MODERN,
            method: 'tools/call',
            tool: 'list_files',
            trace_id: '0af7651916cd43dd8448eb211c80319c',
            parent_span_id: 'b7ad6b7169203331',
          },
          { era: '2025-11-25', method: 'initialize' },
          { era: '2025-11-25', method: 'tools/list' },
        ]),
      );
    } finally {
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
