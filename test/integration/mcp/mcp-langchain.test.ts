/**
 * LangChain's MCP adapter (`@langchain/mcp-adapters`, MultiServerMCPClient) against `/mcp`, as an agent builder
 * wires it: with a key in `headers`, and with an OAuth `authProvider` (the first connect sends the person to the
 * consent page and fails with the SDK's UnauthorizedError; the app finishes the sign-in with the code and connects
 * again). Its tools run as the signed-in person. A wrong key and an unknown token fail with Prism's words.
 */
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { TestOAuthProvider } from '../../helpers/oauth-test-client';
import { startTestApp, uploadFile, type TestApp } from '../../helpers/test-app';

jest.setTimeout(60_000);

describe("LangChain's MCP adapter against /mcp", () => {
  let app: TestApp;
  let key: string;
  let mcpUrl: string;

  beforeAll(async () => {
    app = await startTestApp();
    key = await app.createKey('langchain-people', 'pro');
    mcpUrl = `${app.url}/mcp`;
    expect((await uploadFile(app.url, key, 'hello', { filename: 'langchain-mine.txt' })).status).toBe(201);
  });
  afterAll(() => app.close());

  const adapter = (connection: Record<string, unknown>): MultiServerMCPClient =>
    new MultiServerMCPClient({
      mcpServers: { prism: { transport: 'http', url: mcpUrl, reconnect: { enabled: false }, ...connection } },
      throwOnLoadError: true,
      useStandardContentBlocks: true,
    });

  /** The text the `list_files` tool returned, through LangChain's tool interface. */
  async function listFilesText(client: MultiServerMCPClient): Promise<string> {
    const tool = (await client.getTools()).find((t) => t.name === 'list_files');
    if (!tool) throw new Error('no list_files tool');
    return JSON.stringify(await tool.invoke({}));
  }

  it('connects with a key in headers and runs a tool as that key', async () => {
    const client = adapter({ headers: { Authorization: `Bearer ${key}` } });
    try {
      expect(await listFilesText(client)).toContain('langchain-mine.txt');
    } finally {
      await client.close();
    }
  });

  it('signs in with an OAuth authProvider: consent, finishAuth with the code, then tools as that person', async () => {
    const provider = new TestOAuthProvider({ action: 'approve', apiKey: key });
    const first = adapter({ authProvider: provider });
    await expect(first.getTools()).rejects.toThrow(/Unauthorized|authoriz/i);
    await first.close();
    expect(provider.opened).toHaveLength(1);
    await new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }).finishAuth(provider.code);
    expect(provider.saved?.access_token).toMatch(/^mcp_at_/);

    const client = adapter({ authProvider: provider });
    try {
      expect(await listFilesText(client)).toContain('langchain-mine.txt');
    } finally {
      await client.close();
    }
  });

  it('fails with "Invalid API Key" for a wrong key and with the token message for an unknown token', async () => {
    const wrong = adapter({ headers: { Authorization: 'Bearer prism_not_a_key' } });
    await expect(wrong.getTools()).rejects.toThrow(/Invalid API Key/);
    await wrong.close();
    const stale = adapter({ headers: { Authorization: 'Bearer mcp_at_not_a_token' } });
    await expect(stale.getTools()).rejects.toThrow(/access token is invalid, expired or revoked/);
    await stale.close();
  });
});
