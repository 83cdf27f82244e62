/**
 * `/mcp` over Streamable HTTP with the MCP SDK client against the running app: the handshake, tool schemas,
 * extraction equal to the REST answer, files round trips, progress, the anonymous rules, the HTTP refusals
 * (401 with a challenge, 503 without, 403 for foreign hosts, 405), rate limits and the error translation.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { makeTextPdf, renderReceiptImage } from '../../helpers/media-fixtures';
import { connectMcp, toolError, toolOutput } from '../../helpers/mcp-client';
import { call, startTestApp, type TestApp } from '../../helpers/test-app';
import { rawSql } from '../../helpers/raw-sql';

/** Every toolset: this suite exercises every tool (mcp-toolsets.test.ts covers the default list). */
const ALL = { toolsets: 'all' };

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const MCP_HEADERS = { accept: 'application/json, text/event-stream' };

// OCR runs on the embedded engine; on a shared, loaded machine one run can take well over the default 30 s.
jest.setTimeout(120_000);

describe('/mcp over Streamable HTTP', () => {
  let app: TestApp;
  let key: string;
  let client: Client;
  let receipt: Buffer;
  let media: http.Server;
  let mediaUrl: string;

  beforeAll(async () => {
    app = await startTestApp({ PRISM_ALLOW_PRIVATE_URLS: '1' });
    key = await app.createKey('mcp-users', 'pro');
    client = await connectMcp(app.url, `Bearer ${key}`, ALL);
    receipt = renderReceiptImage();
    media = http.createServer((req, res) => {
      res.setHeader('content-type', 'image/png');
      res.end(receipt);
    });
    await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
    mediaUrl = `http://127.0.0.1:${(media.address() as AddressInfo).port}/receipt.png`;
  });
  afterAll(async () => {
    await client.close();
    await new Promise((resolve) => media.close(resolve));
    await app.close();
  });

  const callTool = (c: Client, name: string, args: Record<string, unknown>) =>
    c.callTool({ name, arguments: args }) as Promise<CallToolResult>;

  it('initializes and lists every tool with input and output schemas and annotations', async () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'prism' });
    expect(client.getInstructions()).toMatch(/list_hub_domains/);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'extract_image',
        'extract_document',
        'extract_video',
        'extract_audio',
        'get_prediction',
        'upload_file',
        'get_file',
        'list_files',
        'run_skill',
        'execute_agent',
        'get_execution',
      ]),
    );
    for (const tool of tools) {
      expect(tool.name).toMatch(/^[a-z0-9_]{1,40}$/);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(typeof tool.annotations?.readOnlyHint).toBe('boolean');
    }
    const extract = tools.find((t) => t.name === 'extract_image');
    expect(Object.keys(extract?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['domain', 'json_schema', 'url', 'file_id', 'data']),
    );
    expect(extract?.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: true });
    expect(tools.find((t) => t.name === 'get_file')?.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('extracts an image with structured content equal to the REST answer', async () => {
    const data = receipt.toString('base64');
    const result = await callTool(client, 'extract_image', { domain: 'document.receipt', data });
    const prediction = toolOutput(result);
    expect(prediction).toMatchObject({ object: 'prediction', status: 'completed', domain: 'document.receipt' });
    const stored = await call(`${app.url}/v1/predictions/${String(prediction.id)}`, { key });
    expect(await stored.json()).toEqual(prediction);
    const rest = await call(`${app.url}/v1/image/generate`, {
      key,
      json: { domain: 'document.receipt', images: [`data:image/png;base64,${data}`] },
    });
    const restBody = (await rest.json()) as Record<string, unknown>;
    expect(restBody.response).toEqual(prediction.response);
    expect(restBody.usage).toEqual(prediction.usage);
    expect((prediction.response as Record<string, unknown>).total).toBe(26.22);
  });

  it('takes two calls in a row (a fresh transport per request)', async () => {
    for (let i = 0; i < 2; i += 1) {
      const out = toolOutput(await callTool(client, 'get_domain_schema', { domain: 'document.invoice' }));
      expect(out).toMatchObject({ domain: 'document.invoice' });
    }
  });

  it('round-trips files: upload from base64 and from a URL, get, list, then extract by file id', async () => {
    const uploaded = toolOutput(
      await callTool(client, 'upload_file', { data: receipt.toString('base64'), filename: 'receipt.png' }),
    );
    expect(uploaded).toMatchObject({ object: 'file', filename: 'receipt.png', content_type: 'image/png' });
    expect(uploaded.bytes).toBe(receipt.length);
    expect(String(uploaded.public_url)).toContain(`${app.url}/v1/files/`);

    const fetched = toolOutput(await callTool(client, 'upload_file', { url: mediaUrl }));
    expect(fetched).toMatchObject({ filename: 'receipt.png', md5: uploaded.md5 });

    const got = toolOutput(await callTool(client, 'get_file', { file_id: uploaded.id }));
    const rest = (await (await call(`${app.url}/v1/files/${String(uploaded.id)}`, { key })).json()) as Record<
      string,
      unknown
    >;
    expect({ ...got, public_url: null }).toEqual({ ...rest, public_url: null });

    const listed = toolOutput(await callTool(client, 'list_files', { limit: 1 }));
    expect((listed.items as unknown[]).length).toBe(1);
    expect(listed.next_offset).toBe(1);
    const all = toolOutput(await callTool(client, 'list_files', {}));
    expect((all.items as { id: string }[]).map((f) => f.id)).toEqual(expect.arrayContaining([uploaded.id, fetched.id]));

    const byId = toolOutput(
      await callTool(client, 'extract_image', { domain: 'document.receipt', file_id: uploaded.id }),
    );
    expect((byId.response as Record<string, unknown>).total).toBe(26.22);
  });

  it('sends progress notifications during a long document extraction', async () => {
    const pdf = await makeTextPdf([
      ['INVOICE', 'Invoice number: INV-1', 'Total: 10.00'],
      ['Page two', 'Notes'],
      ['Page three', 'More notes'],
    ]);
    const seen: { progress: number; total?: number | undefined }[] = [];
    const result = (await client.callTool(
      { name: 'extract_document', arguments: { domain: 'document.invoice', data: pdf.toString('base64') } },
      undefined,
      { onprogress: (p) => seen.push(p), resetTimeoutOnProgress: true },
    )) as CallToolResult;
    const prediction = toolOutput(result);
    expect(prediction).toMatchObject({ status: 'completed', usage: { elements_processed: 3, element_type: 'page' } });
    expect(seen.length).toBeGreaterThanOrEqual(1);
    expect(seen.at(-1)).toMatchObject({ progress: 3, total: 3 });
    for (let i = 1; i < seen.length; i += 1) expect(seen[i]!.progress).toBeGreaterThan(seen[i - 1]!.progress);
  });

  it('polls a batch extraction with get_prediction', async () => {
    const queued = toolOutput(
      await callTool(client, 'extract_image', { domain: 'document.receipt', url: mediaUrl, batch: true }),
    );
    expect(queued.status).toBe('pending'); // background work is returned pending first (spec default)
    let current = queued;
    while (current.status !== 'completed' && current.status !== 'failed') {
      await new Promise((resolve) => setTimeout(resolve, 50));
      current = toolOutput(await callTool(client, 'get_prediction', { id: queued.id }));
    }
    expect(current.status).toBe('completed');
  });

  it("exposes the agent runtime's tool registry through the same server", async () => {
    const { tools } = await client.listTools();
    const registry = app.container.agents.tools.list().map((t) => t.name);
    expect(registry.length).toBeGreaterThan(0);
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(registry));
    const ocr = toolOutput(
      await callTool(client, 'ocr_image', { image: `data:image/png;base64,${receipt.toString('base64')}` }),
    );
    expect(JSON.stringify(ocr.page)).toMatch(/GREENLEAF/);
    const anonymous = await connectMcp(app.url, 'Bearer prism', ALL);
    try {
      const found = toolOutput(await callTool(anonymous, 'lookup_hub_domain', { domain: 'document.invoice' }));
      expect(found).toMatchObject({ found: true, domain: 'document.invoice' });
      expect(toolError(await callTool(anonymous, 'ocr_image', { image: mediaUrl }))).toMatchObject({
        code: 'missing_api_key',
      });
    } finally {
      await anonymous.close();
    }
  });

  it('returns caller errors as isError results with the spec codes', async () => {
    const unknownDomain = toolError(
      await callTool(client, 'extract_image', { domain: 'no.such-domain', data: receipt.toString('base64') }),
    );
    expect(unknownDomain).toMatchObject({ code: 'domain_not_found', type: 'not_found_error', status: 404 });
    expect(unknownDomain.request_id).toEqual(expect.any(String));

    const noInput = toolError(await callTool(client, 'extract_image', { domain: 'document.receipt' }));
    expect(noInput).toMatchObject({ code: 'missing_input' });

    const badMedia = toolError(
      await callTool(client, 'extract_image', { domain: 'document.receipt', data: 'bm90IGFuIGltYWdl' }),
    );
    expect(badMedia).toMatchObject({ code: 'invalid_media' });

    const missing = toolError(await callTool(client, 'get_prediction', { id: 'nope' }));
    expect(missing).toMatchObject({ code: 'prediction_not_found' });

    const badArgs = await callTool(client, 'get_file', { file_id: 42 });
    expect(badArgs.isError).toBe(true);
    expect(JSON.stringify(badArgs.content)).toMatch(/Input validation error/);

    const unknownTool = await callTool(client, 'no_such_tool', {});
    expect(unknownTool.isError).toBe(true);
    expect(JSON.stringify(unknownTool.content)).toMatch(/no_such_tool not found/);
  });

  it("keeps another organisation's records out of reach", async () => {
    const mine = toolOutput(await callTool(client, 'upload_file', { data: Buffer.from('secret').toString('base64') }));
    const other = await connectMcp(app.url, `Bearer ${await app.createKey('other-org', 'pro')}`);
    try {
      expect(toolError(await callTool(other, 'get_file', { file_id: mine.id }))).toMatchObject({
        code: 'file_not_found',
      });
    } finally {
      await other.close();
    }
  });

  it('serves anonymous callers the hub, and tells them other tools need an account', async () => {
    // No header at all is challenged (OAuth), see mcp-oauth.test.ts; the sentinel and an empty bearer are anonymous.
    for (const authorization of ['Bearer ', 'Bearer prism']) {
      const anonymous = await connectMcp(app.url, authorization);
      try {
        const hub = toolOutput(await callTool(anonymous, 'list_hub_domains', { input: 'document' }));
        expect((hub.domains as { domain: string }[]).map((d) => d.domain)).toContain('document.invoice');
        const refused = toolError(await callTool(anonymous, 'list_files', {}));
        expect(refused).toMatchObject({ code: 'missing_api_key', type: 'authentication_error' });
        expect(String(refused.message)).toMatch(/needs a Prism account/);
        const resources = await anonymous.listResources();
        expect(resources.resources.map((r) => r.uri)).toContain('hub://domains/document.invoice/schema');
      } finally {
        await anonymous.close();
      }
    }
  });

  it('serves hub domain schemas as resources', async () => {
    const read = await client.readResource({ uri: 'hub://domains/document.receipt/schema' });
    const [content] = read.contents;
    const schema = JSON.parse(content && 'text' in content ? content.text : 'null') as Record<string, unknown>;
    const rest = (await (await call(`${app.url}/v1/hub/schema`, { json: { domain: 'document.receipt' } })).json()) as {
      json_schema: unknown;
    };
    expect(schema).toEqual(rest.json_schema);
    await expect(client.readResource({ uri: 'hub://domains/no.such/schema' })).rejects.toThrow();
  });

  it('rejects an unknown key with 401 and a WWW-Authenticate challenge', async () => {
    await expect(connectMcp(app.url, 'Bearer prism_not_a_key')).rejects.toMatchObject({ code: 401 });
    await expect(connectMcp(app.url, 'Bearer prism_not_a_key')).rejects.toBeInstanceOf(StreamableHTTPError);
    const res = await call(`${app.url}/mcp`, { key: 'prism_not_a_key', json: INIT, headers: MCP_HEADERS });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { message: 'Invalid API Key' } });
  });

  it('refuses foreign Host and Origin headers and non-POST methods', async () => {
    const foreignHost = await new Promise<number>((resolve, reject) => {
      const body = JSON.stringify(INIT);
      const req = http.request(
        `${app.url}/mcp`,
        {
          method: 'POST',
          headers: { host: 'evil.example', 'content-type': 'application/json', ...MCP_HEADERS },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(foreignHost).toBe(403);
    const foreignOrigin = await call(`${app.url}/mcp`, {
      json: INIT,
      headers: { ...MCP_HEADERS, origin: 'http://evil.example' },
    });
    expect(foreignOrigin.status).toBe(403);
    const localOrigin = await call(`${app.url}/mcp`, {
      key: 'prism',
      json: INIT,
      headers: { ...MCP_HEADERS, origin: 'http://localhost:3000' },
    });
    expect(localOrigin.status).toBe(200);
    const get = await call(`${app.url}/mcp`, { key: 'prism', headers: MCP_HEADERS });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });
});

describe('/mcp limits', () => {
  it('takes base64 media larger than the API JSON limit, and refuses bodies over its own', async () => {
    const app = await startTestApp({ PRISM_MAX_JSON_BYTES: '2048', PRISM_MCP_MAX_JSON_BYTES: '200000' });
    const client = await connectMcp(app.url, `Bearer ${app.ownerKey}`, ALL);
    try {
      const png = renderReceiptImage();
      expect(png.length).toBeGreaterThan(2048);
      const out = toolOutput(
        (await client.callTool({
          name: 'upload_file',
          arguments: { data: png.toString('base64') },
        })) as CallToolResult,
      );
      expect(out.bytes).toBe(png.length);
      const tooLarge = await call(`${app.url}/mcp`, {
        key: app.ownerKey,
        headers: MCP_HEADERS,
        json: { ...INIT, params: { ...INIT.params, padding: 'x'.repeat(300_000) } },
      });
      expect(tooLarge.status).toBe(413);
      expect(await tooLarge.json()).toMatchObject({ error: { data: { code: 'payload_too_large' } } });
    } finally {
      await client.close();
      await app.close();
    }
  });

  it('refuses a deeply nested body before parsing it, and keeps serving', async () => {
    const app = await startTestApp();
    try {
      const deep = await fetch(`${app.url}/mcp`, {
        method: 'POST',
        headers: { ...MCP_HEADERS, authorization: `Bearer ${app.ownerKey}`, 'content-type': 'application/json' },
        body: '['.repeat(5000) + ']'.repeat(5000),
      });
      expect(deep.status).toBe(400);
      const body = (await deep.json()) as { error: { message: string } };
      expect(body.error.message).toMatch(/nested too deeply/);
      expect((await fetch(`${app.url}/v1/health`)).status).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('answers 503 with Retry-After and no challenge when keys cannot be looked up', async () => {
    const app = await startTestApp();
    try {
      await rawSql(app.container).breakConnection();
      const res = await call(`${app.url}/mcp`, { key: app.ownerKey, json: INIT, headers: MCP_HEADERS });
      expect(res.status).toBe(503);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(res.headers.get('www-authenticate')).toBeNull();
      expect(await res.json()).toMatchObject({ error: { data: { code: 'auth_unavailable' } } });
      await expect(connectMcp(app.url, `Bearer ${app.ownerKey}`, ALL)).rejects.toMatchObject({ code: 503 });
    } finally {
      await app.close();
    }
  });
});
