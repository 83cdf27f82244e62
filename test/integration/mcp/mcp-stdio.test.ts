/**
 * `prism mcp` as a desktop client launches it: the SDK's StdioClientTransport spawns the CLI on a data folder, the
 * server acts as the owner with no key, and what it stores is what the HTTP API of the same folder serves.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { renderReceiptImage } from '../../helpers/media-fixtures';
import { toolOutput } from '../../helpers/mcp-client';
import { call, startTestApp } from '../../helpers/test-app';

const BIN = path.resolve(__dirname, '..', '..', '..', 'bin', 'prism.js');

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
        env: { ...(process.env as Record<string, string>), PRISM_DATA_DIR: dataDir, PRISM_LOG_LEVEL: 'silent' },
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
