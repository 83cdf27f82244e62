/**
 * The client configuration snippets of docs/mcp-clients.md, run as the clients would: each snippet is read from
 * the page, `/ABSOLUTE/PATH/TO/prism` becomes this checkout (and its data folder a fresh one), and the command it
 * names is launched with the MCP SDK's stdio client from another working folder (so `prism mcp` runs from any
 * folder), or the URL it names is connected to (with the OAuth sign-in a client without a key starts, or the
 * header it configures). Each lists the tools it should.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { TestOAuthProvider } from '../../helpers/oauth-test-client';
import { startTestApp, type TestApp } from '../../helpers/test-app';

jest.setTimeout(120_000);

const ROOT = path.resolve(__dirname, '..', '..', '..');
const PLACEHOLDER = '/ABSOLUTE/PATH/TO/prism';
const DOC = fs.readFileSync(path.join(ROOT, 'docs', 'mcp-clients.md'), 'utf8');

/** The fenced block after `<!-- snippet: name -->`. */
function snippet(name: string): string {
  const found = new RegExp(`<!-- snippet: ${name} -->\\s*\`\`\`[a-z]*\\n([\\s\\S]*?)\`\`\``).exec(DOC);
  if (!found?.[1]) throw new Error(`docs/mcp-clients.md has no snippet '${name}'`);
  return found[1];
}

interface Launch {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** `claude mcp add NAME [--env K=V]… -- COMMAND ARGS…` or `claude mcp add --transport http NAME URL`. */
function parseClaudeAdd(line: string): { launch?: Launch; url?: string } {
  const words = line.trim().split(/\s+/);
  expect(words.slice(0, 3)).toEqual(['claude', 'mcp', 'add']);
  const env: Record<string, string> = {};
  const rest: string[] = [];
  let transport = 'stdio';
  for (let i = 3; i < words.length; i += 1) {
    const word = words[i] as string;
    if (word === '--') {
      const [command = '', ...args] = words.slice(i + 1);
      return { launch: { command, args, env } };
    }
    if (word === '--env' || word === '-e') {
      const [k = '', v = ''] = (words[(i += 1)] as string).split('=');
      env[k] = v;
    } else if (word === '--transport') transport = words[(i += 1)] as string;
    else rest.push(word);
  }
  expect(transport).toBe('http');
  return { url: rest[1] as string };
}

describe('client configuration snippets (docs/mcp-clients.md)', () => {
  let dataDir: string;
  let elsewhere: string;
  let app: TestApp;
  let key: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-snippet-data-'));
    elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-snippet-cwd-'));
    app = await startTestApp();
    key = await app.createKey('snippets', 'pro');
  });
  afterAll(async () => {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(elsewhere, { recursive: true, force: true });
  });

  const local = (text: string): string => text.split(`${PLACEHOLDER}/data`).join(dataDir).split(PLACEHOLDER).join(ROOT);
  const remote = (text: string): string => text.split('http://localhost:3000').join(app.url);

  async function toolsOverStdio(launch: Launch): Promise<string[]> {
    const client = new Client({ name: 'snippet', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: launch.command,
        args: launch.args,
        env: { PATH: process.env.PATH ?? '', PRISM_LOG_LEVEL: 'silent', ...launch.env },
        cwd: elsewhere,
        stderr: 'ignore',
      }),
    );
    try {
      return (await client.listTools()).tools.map((t) => t.name);
    } finally {
      await client.close();
    }
  }

  async function toolsOverHttp(url: string, headers: Record<string, string> = {}): Promise<string[]> {
    let client = new Client({ name: 'snippet', version: '1' });
    if (headers.Authorization) {
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    } else {
      // No key configured: the client signs in with OAuth (here as the test key's user).
      const provider = new TestOAuthProvider({ action: 'approve', apiKey: key });
      await expect(
        client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider })),
      ).rejects.toThrow(UnauthorizedError);
      await new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }).finishAuth(provider.code);
      client = new Client({ name: 'snippet', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
    }
    try {
      return (await client.listTools()).tools.map((t) => t.name);
    } finally {
      await client.close();
    }
  }

  it('Claude Desktop, Cursor and VS Code (stdio) launch prism mcp from another folder', async () => {
    const desktop = JSON.parse(local(snippet('claude-desktop'))) as { mcpServers: { prism: Launch } };
    expect(desktop.mcpServers.prism.command).toBe('node');
    expect(await toolsOverStdio(desktop.mcpServers.prism)).toEqual(
      expect.arrayContaining(['extract_document', 'upload_file', 'run_skill']),
    );
    const cursor = JSON.parse(local(snippet('cursor'))) as { mcpServers: { prism: Launch } };
    expect(await toolsOverStdio(cursor.mcpServers.prism)).toEqual(expect.arrayContaining(['create_skill']));
    const vscode = JSON.parse(local(snippet('vscode'))) as { servers: { prism: Launch & { type: string } } };
    expect(vscode.servers.prism.type).toBe('stdio');
    expect(await toolsOverStdio(vscode.servers.prism)).toContain('extract_image');
    // Nothing was written to the working folder the clients launched it from.
    expect(fs.readdirSync(elsewhere)).toEqual([]);
    expect(fs.readdirSync(dataDir).length).toBeGreaterThan(0);
  });

  it('Claude Code (claude mcp add … -- node …) launches the command it names', async () => {
    const { launch } = parseClaudeAdd(local(snippet('claude-code')));
    expect(launch?.command).toBe('node');
    expect(await toolsOverStdio(launch as Launch)).toContain('extract_audio');
  });

  it('the remote snippets connect to /mcp: with OAuth sign-in when no key is set, or with the header', async () => {
    const cursor = JSON.parse(remote(snippet('cursor-remote'))) as { mcpServers: { prism: { url: string } } };
    expect(await toolsOverHttp(cursor.mcpServers.prism.url)).toContain('extract_document');
    const vscode = JSON.parse(remote(snippet('vscode-remote'))) as {
      servers: { prism: { type: string; url: string; headers: Record<string, string> } };
    };
    expect(vscode.servers.prism.type).toBe('http');
    const headers = {
      Authorization: String(vscode.servers.prism.headers.Authorization).replace('${input:prism-key}', key),
    };
    expect(await toolsOverHttp(vscode.servers.prism.url, headers)).toContain('execute_agent');
    const { url } = parseClaudeAdd(remote(snippet('claude-code-remote')));
    expect(await toolsOverHttp(String(url))).toContain('upload_file');
  });
});
