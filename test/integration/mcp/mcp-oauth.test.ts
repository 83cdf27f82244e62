/**
 * OAuth 2.1 on `/mcp` with Prism as its own authorization server, driven by the MCP SDK client's own OAuth code
 * (StreamableHTTPClientTransport with an `authProvider`): discovery from the 401 challenge, dynamic client
 * registration, PKCE, the consent page (signing in with an API key, or as the owner in single-user mode), the code
 * exchange, tools as the approving user, refresh on expiry, rotation and revocation; and beside it API keys and the
 * anonymous sentinel, with refusals a person can read.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { connectMcp, toolOutput } from '../../helpers/mcp-client';
import { answerConsent, TEST_REDIRECT, TestOAuthProvider } from '../../helpers/oauth-test-client';
import { call, startTestApp, uploadFile, type TestApp } from '../../helpers/test-app';

jest.setTimeout(60_000);

const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** Runs the SDK's whole flow: a 401, discovery, registration, consent, code exchange; returns a connected client. */
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

const listFiles = async (client: Client) =>
  toolOutput((await client.callTool({ name: 'list_files', arguments: {} })) as CallToolResult).items as {
    filename: string;
  }[];

describe('OAuth on /mcp (Prism as its authorization server)', () => {
  let app: TestApp;
  let mcpUrl: URL;
  let key: string;

  beforeAll(async () => {
    app = await startTestApp();
    mcpUrl = new URL(`${app.url}/mcp`);
    key = await app.createKey('oauth-people', 'pro');
    expect((await uploadFile(app.url, key, 'hello', { filename: 'mine.txt' })).status).toBe(201);
  });
  afterAll(() => app.close());

  it('serves RFC 9728 resource metadata (path-aware and root) and RFC 8414 server metadata', async () => {
    const resource = await (await call(`${app.url}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(resource).toMatchObject({ resource: `${app.url}/mcp`, authorization_servers: [`${app.url}/`] });
    expect(await (await call(`${app.url}/.well-known/oauth-protected-resource`)).json()).toMatchObject({
      resource: `${app.url}/mcp`,
    });
    const server = await (await call(`${app.url}/.well-known/oauth-authorization-server`)).json();
    expect(server).toMatchObject({
      issuer: `${app.url}/`,
      authorization_endpoint: `${app.url}/authorize`,
      token_endpoint: `${app.url}/token`,
      registration_endpoint: `${app.url}/register`,
      revocation_endpoint: `${app.url}/revoke`,
      code_challenge_methods_supported: ['S256'],
      scopes_supported: ['mcp'],
    });
  });

  it('challenges a request without credentials (POST and GET) with resource_metadata, before any 405', async () => {
    for (const method of ['POST', 'GET'] as const) {
      const res = await call(`${app.url}/mcp`, {
        method,
        headers: MCP_HEADERS,
        ...(method === 'POST' ? { body: JSON.stringify(INIT) } : {}),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(
        `Bearer realm="prism", resource_metadata="${app.url}/.well-known/oauth-protected-resource/mcp", scope="mcp"`,
      );
      const body = (await res.json()) as { error: { message: string } };
      expect(body.error.message).toMatch(/sign in with OAuth.*Bearer prism/);
    }
  });

  it('signs in through the SDK client: DCR, consent with an API key, PKCE code exchange, tools as that user', async () => {
    const provider = new TestOAuthProvider({ action: 'approve', apiKey: key });
    const client = await signInWithSdk(mcpUrl, provider);
    // Registered as a public client (no secret to keep), and asked for this server's /mcp.
    expect(provider.client).toMatchObject({ token_endpoint_auth_method: 'none' });
    expect(provider.client).not.toHaveProperty('client_secret');
    const opened = provider.opened[0] as URL;
    expect(opened.searchParams.get('resource')).toBe(`${app.url}/mcp`);
    expect(opened.searchParams.get('code_challenge_method')).toBe('S256');
    expect(provider.pages[0]).toContain('Prism OAuth test client');
    expect(provider.pages[0]).toContain('127.0.0.1:9');
    expect(provider.saved?.access_token).toMatch(/^mcp_at_/);
    expect(provider.saved?.expires_in).toBe(3600);
    // The token acts as the key's user: its organisation's file is listed.
    expect((await listFiles(client)).map((f) => f.filename)).toContain('mine.txt');
    await client.close();
  });

  it('refuses a wrong API key on the consent page, in words, and keeps the request open', async () => {
    const provider = new TestOAuthProvider({ action: 'approve', apiKey: 'prism_wrong' });
    const client = new Client({ name: 'oauth-test', version: '1' });
    const failing = client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    await expect(failing).rejects.toThrow(/consent answered 401/);
    expect(provider.pages.at(-1)).toContain('Invalid API Key');
  });

  it('sends the browser back with access_denied when the person denies', async () => {
    const provider = new TestOAuthProvider({ action: 'deny', apiKey: '' });
    const client = new Client({ name: 'oauth-test', version: '1' });
    await expect(client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }))).rejects.toThrow(
      UnauthorizedError,
    );
    expect(provider.landed?.origin + (provider.landed?.pathname ?? '')).toBe(TEST_REDIRECT);
    expect(provider.landed?.searchParams.get('error')).toBe('access_denied');
    expect(provider.landed?.searchParams.get('code')).toBeNull();
  });

  it('refuses an authorization for another resource (no consent page) and unknown tokens, readably', async () => {
    const provider = new TestOAuthProvider({ action: 'approve', apiKey: key });
    await signInWithSdk(mcpUrl, provider).then((c) => c.close());
    const clientId = String(provider.client?.client_id);
    const wrongResource = new URL('/authorize', app.url);
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: TEST_REDIRECT,
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'S256',
      resource: 'https://elsewhere.example/mcp',
      state: 's1',
    })) {
      wrongResource.searchParams.set(k, v);
    }
    const landed = await answerConsent(wrongResource, { action: 'approve', apiKey: key });
    expect(landed.searchParams.get('error')).toBe('invalid_target');
    expect(landed.searchParams.get('state')).toBe('s1');

    // A made-up token: 401 with error="invalid_token" and a message a person can read, in the SDK client too.
    const res = await call(`${app.url}/mcp`, { key: 'mcp_at_made_up', json: INIT, headers: MCP_HEADERS });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_token".*resource_metadata="/);
    const error = await connectMcp(app.url, 'Bearer mcp_at_made_up').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect((error as Error).message).toMatch(/access token is invalid, expired or revoked: sign in again/);
  });

  it('revokes: /revoke ends the grant, its access token gets 401 and its refresh token invalid_grant', async () => {
    const provider = new TestOAuthProvider({ action: 'approve', apiKey: key });
    const client = await signInWithSdk(mcpUrl, provider);
    await client.close();
    const tokens = provider.saved as { access_token: string; refresh_token: string };
    const clientId = String(provider.client?.client_id);
    const revoked = await fetch(`${app.url}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: tokens.refresh_token, client_id: clientId }),
    });
    expect(revoked.status).toBe(200);
    const after = await call(`${app.url}/mcp`, { key: tokens.access_token, json: INIT, headers: MCP_HEADERS });
    expect(after.status).toBe(401);
    const refresh = await fetch(`${app.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: clientId,
      }),
    });
    expect(refresh.status).toBe(400);
    expect(await refresh.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('rotates refresh tokens; a rotated one used again revokes the whole grant', async () => {
    const provider = new TestOAuthProvider({ action: 'approve', apiKey: key });
    await signInWithSdk(mcpUrl, provider).then((c) => c.close());
    const clientId = String(provider.client?.client_id);
    const first = (provider.saved as { refresh_token: string }).refresh_token;
    const refresh = (token: string) =>
      fetch(`${app.url}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token, client_id: clientId }),
      });
    const rotated = (await (await refresh(first)).json()) as { access_token: string; refresh_token: string };
    expect(rotated.refresh_token).not.toBe(first);
    const ok = await call(`${app.url}/mcp`, { key: rotated.access_token, json: INIT, headers: MCP_HEADERS });
    expect(ok.status).toBe(200);
    await ok.body?.cancel();
    expect((await refresh(first)).status).toBe(400);
    // The replay ended the grant: the token issued by the rotation is refused too.
    const after = await call(`${app.url}/mcp`, { key: rotated.access_token, json: INIT, headers: MCP_HEADERS });
    expect(after.status).toBe(401);
    expect((await refresh(rotated.refresh_token)).status).toBe(400);
  });

  it('ends the tokens of a key that is revoked', async () => {
    const created = await app.container.services.accounts.createKey({ org: 'oauth-people', name: 'short-lived' });
    const provider = new TestOAuthProvider({ action: 'approve', apiKey: created.key });
    const client = await signInWithSdk(mcpUrl, provider);
    await client.close();
    await app.container.services.accounts.revokeKey(created.keyId);
    const access = String(provider.saved?.access_token);
    const res = await call(`${app.url}/mcp`, { key: access, json: INIT, headers: MCP_HEADERS });
    expect(res.status).toBe(401);
  });

  it('keeps API keys and the anonymous sentinel working beside OAuth', async () => {
    const keyed = await connectMcp(app.url, `Bearer ${key}`);
    expect((await listFiles(keyed)).map((f) => f.filename)).toContain('mine.txt');
    await keyed.close();
    const anonymous = await connectMcp(app.url, 'Bearer prism');
    const hub = (await anonymous.callTool({ name: 'list_hub_domains', arguments: {} })) as CallToolResult;
    expect(hub.isError).toBeFalsy();
    await anonymous.close();
    const wrong = await call(`${app.url}/mcp`, { key: 'prism_not_a_key', json: INIT, headers: MCP_HEADERS });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(
      /error="invalid_token", error_description="Invalid API Key", resource_metadata=/,
    );
  });
});

describe('OAuth on /mcp: a client configured with a credential /mcp refuses', () => {
  let app: TestApp;
  let key: string;

  beforeAll(async () => {
    app = await startTestApp();
    key = await app.createKey('configured-people', 'pro');
  });
  afterAll(() => app.close());

  it('says on the consent page when the client registered while sending a key or token /mcp refuses', async () => {
    // Clients built on the MCP SDK (mcp-remote among them) send their configured header with the registration,
    // answer its 401 with a sign-in, and keep sending it afterwards: the consent page is where it can be said.
    const noticeFor = async (authorization: string | undefined): Promise<string | undefined> => {
      const registered = await call(`${app.url}/register`, {
        json: { client_name: 'Configured client', redirect_uris: [TEST_REDIRECT], token_endpoint_auth_method: 'none' },
        headers: authorization === undefined ? {} : { authorization },
      });
      expect(registered.status).toBe(201);
      const client = (await registered.json()) as Record<string, unknown>;
      expect(Object.keys(client).filter((k) => k.startsWith('prism_'))).toEqual([]);
      const authorize = new URL('/authorize', app.url);
      authorize.search = new URLSearchParams({
        response_type: 'code',
        client_id: String(client.client_id),
        redirect_uri: TEST_REDIRECT,
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
        resource: `${app.url}/mcp`,
      }).toString();
      const page = await call(authorize.href);
      expect(page.status).toBe(200);
      return /id="notice">([^<]*)</.exec(await page.text())?.[1];
    };
    expect(await noticeFor('Bearer prism_not_a_key')).toMatch(
      /^Invalid API Key: the key in this client’s configuration matches no active Prism key\. .*replace it with a valid key, or remove the Authorization header/,
    );
    expect(await noticeFor('Bearer mcp_at_not_a_token')).toMatch(
      /^The access token in this client’s configuration is invalid, expired or revoked\. .*remove the Authorization header/,
    );
    expect(await noticeFor(`Bearer ${key}`)).toBeUndefined();
    expect(await noticeFor('Bearer prism')).toBeUndefined();
    expect(await noticeFor(undefined)).toBeUndefined();
  });
});

describe('OAuth on /mcp in single-user mode, with short-lived access tokens', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ PRISM_SINGLE_USER: '1', PRISM_MCP_ACCESS_TOKEN_TTL_S: '1' });
  });
  afterAll(() => app.close());

  it('lets the owner approve without a key, and the SDK client refreshes an expired token by itself', async () => {
    expect((await uploadFile(app.url, app.ownerKey, 'x', { filename: 'owners.txt' })).status).toBe(201);
    const provider = new TestOAuthProvider({ action: 'approve', apiKey: '' });
    const client = await signInWithSdk(new URL(`${app.url}/mcp`), provider);
    expect(provider.pages[0]).toContain('single-user mode');
    const firstAccess = provider.saved?.access_token;
    expect((await listFiles(client)).map((f) => f.filename)).toContain('owners.txt');
    await new Promise((resolve) => setTimeout(resolve, 2100));
    // The expired token gets a 401; the SDK refreshes with its refresh token and retries, with no new consent.
    expect((await listFiles(client)).map((f) => f.filename)).toContain('owners.txt');
    expect(provider.saved?.access_token).not.toBe(firstAccess);
    expect(provider.opened).toHaveLength(1);
    await client.close();
  });
});

describe('OAuth where it cannot be offered (a plain-http public URL on a LAN address)', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ PRISM_PUBLIC_URL: 'http://192.168.1.5:3000' });
  });
  afterAll(() => app.close());

  it('serves no metadata and keeps a request without credentials anonymous, never a challenge leading nowhere', async () => {
    expect((await call(`${app.url}/.well-known/oauth-protected-resource/mcp`)).status).toBe(404);
    expect((await call(`${app.url}/register`, { json: { redirect_uris: [TEST_REDIRECT] } })).status).toBe(404);
    const anonymous = await connectMcp(app.url);
    const hub = (await anonymous.callTool({ name: 'list_hub_domains', arguments: {} })) as CallToolResult;
    expect(hub.isError).toBeFalsy();
    await anonymous.close();
    const wrong = await call(`${app.url}/mcp`, { key: 'prism_not_a_key', json: INIT, headers: MCP_HEADERS });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).not.toMatch(/resource_metadata/);
  });
});
