/**
 * OAuth 2.1 §4.1.3 on Prism's authorization server: an authorization code is single use, and one that comes back
 * (someone kept a copy) is refused and the tokens already issued for it are revoked, on whichever replica it comes
 * back to (a second app on the same data: the same SQLite file, or the same PostgreSQL schema). Its own app: the
 * consent page's rate limit is shared with test/integration/mcp/mcp-oauth.test.ts otherwise.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { TEST_REDIRECT, TestOAuthProvider } from '../../helpers/oauth-test-client';
import { call, startTestApp, type TestApp } from '../../helpers/test-app';

jest.setTimeout(60_000);

const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** The SDK's whole flow: a 401, discovery, registration, consent, code exchange; returns a connected client. */
async function signInWithSdk(mcpUrl: URL, provider: TestOAuthProvider): Promise<Client> {
  const first = new Client({ name: 'oauth-test', version: '1' });
  await expect(first.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }))).rejects.toThrow(
    UnauthorizedError,
  );
  const finishing = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  await finishing.finishAuth(provider.code);
  const client = new Client({ name: 'oauth-test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
  return client;
}

describe('a replayed OAuth authorization code', () => {
  let app: TestApp;
  let mcpUrl: URL;
  let key: string;

  beforeAll(async () => {
    app = await startTestApp();
    mcpUrl = new URL(`${app.url}/mcp`);
    key = await app.createKey('oauth-replay', 'pro');
  });
  afterAll(() => app.close());

  /** Sends the code `provider` exchanged to `/token` of `url` again. */
  const replay = (url: string, provider: TestOAuthProvider): Promise<Response> =>
    fetch(`${url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: provider.code,
        code_verifier: provider.codeVerifier(),
        redirect_uri: TEST_REDIRECT,
        client_id: String(provider.client?.client_id),
      }),
    });

  it('a code replayed on another replica is refused there and ends the tokens on the first', async () => {
    const provider = new TestOAuthProvider({ action: 'approve', apiKey: key });
    await signInWithSdk(mcpUrl, provider).then((c) => c.close());
    const access = String(provider.saved?.access_token);
    const other = await startTestApp({}, app.dataDir);
    try {
      const refused = await replay(other.url, provider);
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error_description: string }).error_description).toMatch(/revoked/);
    } finally {
      await other.stop();
    }
    const after = await call(`${app.url}/mcp`, { key: access, json: INIT, headers: MCP_HEADERS });
    expect(after.status).toBe(401);
  });

  it('a replayed authorization code is refused and revokes the tokens issued for it', async () => {
    const provider = new TestOAuthProvider({ action: 'approve', apiKey: key });
    await signInWithSdk(mcpUrl, provider).then((c) => c.close());
    const tokens = provider.saved as { access_token: string; refresh_token: string };
    expect((await call(`${app.url}/mcp`, { key: tokens.access_token, json: INIT, headers: MCP_HEADERS })).status).toBe(
      200,
    );
    const replayed = await replay(app.url, provider);
    expect(replayed.status).toBe(400);
    const body = (await replayed.json()) as { error: string; error_description: string };
    expect(body.error).toBe('invalid_grant');
    expect(body.error_description).toMatch(/already used; the tokens issued for it are revoked/);
    const after = await call(`${app.url}/mcp`, { key: tokens.access_token, json: INIT, headers: MCP_HEADERS });
    expect(after.status).toBe(401);
  });
});
