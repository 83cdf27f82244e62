/**
 * `prism mcp` as a desktop client launches it: the SDK's StdioClientTransport spawns the CLI on a data folder, the
 * server acts as the owner with no key, and what it stores is what the HTTP API of the same folder serves.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { manySchemasZip } from '../../helpers/budget-inputs';
import { renderReceiptImage } from '../../helpers/media-fixtures';
import { toolError, toolOutput } from '../../helpers/mcp-client';
import { call, databaseEnvFor, startTestApp } from '../../helpers/test-app';

const BIN = path.resolve(__dirname, '..', '..', '..', 'bin', 'prism.js');
/** The message limit of the spawned server (PRISM_MCP_MAX_JSON_BYTES), small so a test can pass it. */
const LIMIT = 2 * 1024 * 1024;

describe('prism mcp (stdio)', () => {
  let dataDir: string;
  let client: Client;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-mcp-stdio-'));
    client = new Client({ name: 'prism-stdio-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'mcp', '--toolsets', 'all'],
        env: {
          ...(process.env as Record<string, string>),
          ...databaseEnvFor(dataDir),
          PRISM_DATA_DIR: dataDir,
          PRISM_LOG_LEVEL: 'silent',
          PRISM_MCP_MAX_JSON_BYTES: String(LIMIT),
          // Small, so a bundle of five schemas is over it (the default keyed budget allows 200).
          PRISM_WORK_BUDGET_KEYED: 'schemas=4',
        },
        stderr: 'ignore',
      }),
    );
  });
  afterAll(async () => {
    await client.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('lists the same tools as the HTTP server, with schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining([
        'extract_image',
        'upload_file',
        'list_files',
        'get_prediction',
        'lookup_hub_domain',
        'create_skill',
        'execute_agent',
      ]),
    );
    for (const tool of tools) expect(tool.outputSchema?.type).toBe('object');
  });

  it('serves the skills tools, SKILL.md resources and built-in skill prompts', async () => {
    const listed = toolOutput(
      (await client.callTool({ name: 'list_skills', arguments: { grouped: true } })) as CallToolResult,
    );
    const names = (listed.items as { name: string }[]).map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(['invoice', 'receipt']));
    const { resources } = await client.listResources();
    const skillMds = resources.filter((r) => r.uri.startsWith('prism://skills/'));
    expect(skillMds).toHaveLength(names.length);
    const read = await client.readResource({ uri: skillMds[0]?.uri ?? '' });
    expect(read.contents[0] && 'text' in read.contents[0] ? read.contents[0].text : '').toMatch(/^---\nname: /);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual([...names].sort());
    const prompt = await client.getPrompt({ name: 'invoice', arguments: { document: 'file-123' } });
    const text = prompt.messages[0]?.content.type === 'text' ? prompt.messages[0].content.text : '';
    expect(text).toContain('"inputs":{"document":{"type":"input_file","file_id":"file-123"}}');
  });

  it('refuses a message over the limit with a JSON-RPC error naming the limit, and keeps serving', async () => {
    const big = Buffer.alloc(LIMIT, 7).toString('base64');
    const refused = client.callTool({ name: 'upload_file', arguments: { data: big, filename: 'big.bin' } });
    await expect(refused).rejects.toMatchObject({
      code: -32600,
      message: expect.stringMatching(/Message too large: \d+ bytes, over the 2097152-byte limit/) as unknown,
    });
    // The same server answers the next calls.
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    const small = toolOutput(
      (await client.callTool({
        name: 'upload_file',
        arguments: { data: 'aGVsbG8=', filename: 'h.txt' },
      })) as CallToolResult,
    );
    expect(small).toMatchObject({ filename: 'h.txt', bytes: 5 });
  });

  it('runs each message on the configured keyed work budget: a bundle over it is a tool error naming the limit', async () => {
    const createFrom = async (zip: Buffer, name: string) => {
      const upload = toolOutput(
        (await client.callTool({
          name: 'upload_file',
          arguments: { data: zip.toString('base64'), filename: `${name}.zip` },
        })) as CallToolResult,
      );
      return (await client.callTool({
        name: 'create_skill',
        arguments: { file_id: upload.id, name },
      })) as CallToolResult;
    };
    const error = toolError(await createFrom(manySchemasZip(5, 3), 'over-budget'));
    expect(error).toMatchObject({ code: 'work_budget_exceeded', status: 413, param: 'schemas', allowed: 4 });
    // a budget per message, not per connection: two bundles of three schemas, one after the other, both fit
    expect(toolOutput(await createFrom(manySchemasZip(3, 3), 'three-a')).name).toBe('three-a');
    expect(toolOutput(await createFrom(manySchemasZip(3, 3), 'three-b')).name).toBe('three-b');
  });

  it('reads a local file given as path (upload_file and the extract tools), which HTTP does not offer', async () => {
    const file = path.join(dataDir, 'receipt.png');
    fs.writeFileSync(file, renderReceiptImage());
    const { tools } = await client.listTools();
    const extract = tools.find((t) => t.name === 'extract_image');
    expect(Object.keys(extract?.inputSchema.properties ?? {})).toContain('path');
    const uploaded = toolOutput(
      (await client.callTool({ name: 'upload_file', arguments: { path: file } })) as CallToolResult,
    );
    expect(uploaded).toMatchObject({
      filename: 'receipt.png',
      bytes: fs.statSync(file).size,
      content_type: 'image/png',
    });
    const prediction = toolOutput(
      (await client.callTool({
        name: 'extract_image',
        arguments: { domain: 'document.receipt', path: file },
      })) as CallToolResult,
    );
    expect(prediction).toMatchObject({ status: 'completed' });
    expect(JSON.stringify(prediction.response)).toMatch(/26\.22/);
    const missing = toolError(
      (await client.callTool({
        name: 'extract_image',
        arguments: { domain: 'document.receipt', path: path.join(dataDir, 'nope.png') },
      })) as CallToolResult,
    );
    expect(missing).toMatchObject({ code: 'missing_input', param: 'path' });
    const relative = toolError(
      (await client.callTool({ name: 'upload_file', arguments: { path: 'receipt.png' } })) as CallToolResult,
    );
    expect(String(relative.message)).toMatch(/must be absolute/);
  });

  it('acts as the owner: an extraction and a file land in the data folder the HTTP API serves', async () => {
    const png = renderReceiptImage();
    const prediction = toolOutput(
      (await client.callTool({
        name: 'extract_image',
        arguments: { domain: 'document.receipt', data: png.toString('base64') },
      })) as CallToolResult,
    );
    expect(prediction).toMatchObject({ status: 'completed' });
    const file = toolOutput(
      (await client.callTool({
        name: 'upload_file',
        arguments: { data: png.toString('base64'), filename: 'r.png' },
      })) as CallToolResult,
    );
    // The server reads the same folder (the CLI created its owner, whose key is in owner.key).
    const app = await startTestApp({}, dataDir);
    try {
      const ownerKey = fs.readFileSync(path.join(dataDir, 'owner.key'), 'utf8').trim();
      const stored = await call(`${app.url}/v1/predictions/${String(prediction.id)}`, { key: ownerKey });
      expect(await stored.json()).toEqual(prediction);
      const storedFile = await call(`${app.url}/v1/files/${String(file.id)}`, { key: ownerKey });
      expect(storedFile.status).toBe(200);
    } finally {
      await app.stop();
    }
  });
});

describe('prism mcp (stdio) on the wire', () => {
  it('answers a line that is not JSON with -32700 and one that is not JSON-RPC with -32600, and keeps serving', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-mcp-raw-'));
    const child = spawn(process.execPath, [BIN, 'mcp'], {
      env: { ...process.env, PRISM_DATA_DIR: dataDir, PRISM_LOG_LEVEL: 'silent' },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const lines = createInterface({ input: child.stdout });
    const answers: Record<string, unknown>[] = [];
    const waiting: (() => void)[] = [];
    lines.on('line', (line) => {
      answers.push(JSON.parse(line) as Record<string, unknown>);
      waiting.shift()?.();
    });
    const next = () =>
      new Promise<Record<string, unknown>>((resolve) => {
        const take = () => resolve(answers.shift() as Record<string, unknown>);
        if (answers.length > 0) take();
        else waiting.push(take);
      });
    try {
      child.stdin.write('{"jsonrpc": "2.0", "id": 1, "method": \n');
      expect(await next()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
      child.stdin.write('{"id": 2, "hello": true}\n');
      expect(await next()).toMatchObject({ id: 2, error: { code: -32600 } });
      child.stdin.write(
        `${JSON.stringify({
          jsonrpc: '2.0',
          id: 3,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        })}\n`,
      );
      expect(await next()).toMatchObject({ id: 3, result: { serverInfo: { name: 'prism' } } });
    } finally {
      child.stdin.end();
      await new Promise((resolve) => child.once('exit', resolve));
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
