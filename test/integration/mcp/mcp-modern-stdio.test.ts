/**
 * `prism mcp` at 2026-07-28: the official SDK's v2 client launches the CLI over stdio pinned to the modern era
 * (its connect is a `server/discover`, no initialize), lists the same tools as the 2025 era on the same binary, and
 * calls tools as the owner; the v2 client's legacy mode on the same binary still gets 2025-11-25.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { toolError, toolOutput } from '../../helpers/mcp-client';
import { MODERN } from '../../helpers/mcp-modern-client';
import { databaseEnvFor } from '../../helpers/test-app';

const BIN = path.resolve(__dirname, '..', '..', '..', 'bin', 'prism.js');

jest.setTimeout(120_000);

describe('prism mcp (stdio) at 2026-07-28', () => {
  let dataDir: string;
  const open: Client[] = [];

  const launch = async (mode: 'pin' | 'legacy'): Promise<Client> => {
    const client = new Client(
      { name: 'prism-stdio-v2', version: '1.0.0' },
      { versionNegotiation: { mode: mode === 'pin' ? { pin: MODERN } : 'legacy' } },
    );
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'mcp'],
        env: {
          ...(process.env as Record<string, string>),
          ...databaseEnvFor(dataDir),
          PRISM_DATA_DIR: dataDir,
          PRISM_LOG_LEVEL: 'silent',
        },
        stderr: 'ignore',
      }),
    );
    open.push(client);
    return client;
  };

  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-mcp-stdio-v2-'));
  });
  afterAll(async () => {
    await Promise.allSettled(open.map((c) => c.close()));
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('negotiates 2026-07-28, lists the 2025 era’s tools and calls them as the owner', async () => {
    const modern = await launch('pin');
    expect(modern.getNegotiatedProtocolVersion()).toBe(MODERN);
    expect(modern.getServerVersion()).toMatchObject({ name: 'prism', title: 'Prism' });
    const legacy = await launch('legacy');
    expect(legacy.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    const names = (await modern.listTools()).tools.map((t) => t.name);
    expect(names).toEqual((await legacy.listTools()).tools.map((t) => t.name));
    expect(names).toEqual(expect.arrayContaining(['extract_image', 'run_skill', 'execute_agent', 'upload_file']));
    const uploaded = toolOutput(
      (await modern.callTool({
        name: 'upload_file',
        arguments: { data: Buffer.from('over stdio').toString('base64'), filename: 'note.txt' },
      })) as CallToolResult,
    );
    // The other era, another process on the same data folder, reads it back.
    const fetched = toolOutput(
      (await legacy.callTool({ name: 'get_file', arguments: { file_id: uploaded.id } })) as CallToolResult,
    );
    // Each read signs a fresh download link, so `public_url` differs when the two calls straddle a second.
    const { public_url: fetchedUrl, ...fetchedRest } = fetched;
    const { public_url: uploadedUrl, ...uploadedRest } = uploaded;
    expect(fetchedRest).toEqual(uploadedRest);
    expect(String(fetchedUrl).split('?')[0]).toBe(String(uploadedUrl).split('?')[0]);
    expect(
      toolError((await modern.callTool({ name: 'get_file', arguments: { file_id: 'nope' } })) as CallToolResult),
    ).toMatchObject({ status: 404 });
  });
});
