/**
 * OAuth sign-in to a remote MCP server for agents: the remote server is a second Prism app started here (its /mcp
 * is its own OAuth 2.1 authorization server, access tokens living 2 s). The first app registers it with
 * `auth: {type: 'oauth'}`; the authorization URL it answers is followed with plain HTTP through the remote's
 * consent page as a person would, and the browser's redirect lands on the first app's callback, which exchanges
 * the code. Then an execution whose scripted planner calls the remote's `list_files` reads the remote
 * organisation's file with the token; the tokens are never returned nor stored in clear; the callback's state is
 * single-use; an expired access token is refreshed before a call; a grant revoked during a run fails the call in
 * words and marks the server as needing a new sign-in (said in the next run), and signing in again brings it back.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createSecretBox } from '../../src/lib/secret-box';
import { SIGN_IN_TTL_MS, type OAuthGrant } from '../../src/services/agent-mcp/oauth-sign-in';
import { answerConsent } from '../helpers/oauth-test-client';
import type { ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, startTestApp, uploadFile, type TestApp } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

jest.setTimeout(90_000);

interface ServerWire {
  id: string;
  auth: string;
  oauth_status: string | null;
  authorization_url?: string;
}
interface ExecutionWire {
  id: string;
  status: string;
  steps: { kind: string; name: string; error: string | null }[];
  usage: { message: string | null };
}

const SECRETS_KEY = randomBytes(32);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('OAuth sign-in to a remote MCP server (a second Prism app)', () => {
  let remote: TestApp;
  let remoteKey: string;
  let lab: UpstreamApp;
  let app: TestApp;
  let upstream: ScriptedUpstream;
  let key: string;
  let serverId = '';
  let callbackUrl: URL;

  beforeAll(async () => {
    remote = await startTestApp({ PRISM_MCP_ACCESS_TOKEN_TTL_S: '2' });
    remoteKey = await remote.createKey('remote-people', 'pro');
    expect((await uploadFile(remote.url, remoteKey, 'remote hello', { filename: 'remote-note.txt' })).status).toBe(201);
    lab = await startUpstreamApp(
      [
        {
          id: 'prism-orion-2',
          upstreamModel: 'planner-llm',
          parameters: ['tools', 'tool_choice', 'temperature'],
          pricing: { prompt: 1.0, completion: 1.0 },
        },
      ],
      {
        provider: 'vLLM',
        // The remote app is on loopback: this deployment allows private addresses (as a closed network would).
        env: { PRISM_ALLOW_PRIVATE_URLS: '1', PRISM_SECRETS_KEY: SECRETS_KEY.toString('hex') },
      },
    );
    ({ app, upstream } = lab);
    key = await app.createKey('oauth-agents');
    await app.container.services.accounts.addCredits('oauth-agents', 5);
  });
  afterAll(async () => {
    await lab?.close();
    await remote?.close();
  });

  /** The grant as stored (opened with the deployment's key, as only Prism itself can). */
  const storedGrant = async (): Promise<{ sealed: string; grant: OAuthGrant }> => {
    const { orgId } = await app.container.services.accounts.addCredits('oauth-agents', 0);
    const record = await app.container.stores.mcpServers.get(orgId, serverId);
    const sealed = record?.secretSealed ?? '';
    return { sealed, grant: JSON.parse(createSecretBox(SECRETS_KEY).open(sealed, serverId)) as OAuthGrant };
  };
  const listFilesRun = async (): Promise<{ run: ExecutionWire; toolText: string }> => {
    const seen = upstream.requests.length;
    upstream.next(
      { kind: 'reply', toolCalls: [{ id: 'call_1', name: 'remote__list_files', arguments: '{}' }] },
      { kind: 'reply', content: '```json\n{"answer": "done"}\n```' },
    );
    const res = await call(`${app.url}/v1/agent/execute`, {
      key,
      json: { model: 'prism-orion-2', config: { prompt: 'Which files are there?', mcp_servers: ['remote'] } },
    });
    const run = (await res.json()) as ExecutionWire;
    const second = upstream.requests.slice(seen)[1];
    const messages = (second?.body.messages ?? []) as { role: string; content: string }[];
    return { run, toolText: messages.find((m) => m.role === 'tool')?.content ?? '' };
  };
  /** What a person does: opens the authorization URL, approves with their remote key; the browser lands here. */
  const consent = async (authorizationUrl: string): Promise<URL> =>
    answerConsent(new URL(authorizationUrl), { action: 'approve', apiKey: remoteKey });

  it('registers with auth oauth: pending, with an authorization URL on the remote authorization server', async () => {
    const res = await call(`${app.url}/v1/agent/mcp-servers`, {
      key,
      json: { name: 'remote', url: `${remote.url}/mcp`, auth: { type: 'oauth' }, allowed_tools: ['list_files'] },
    });
    expect(res.status).toBe(201);
    const server = (await res.json()) as ServerWire;
    serverId = server.id;
    expect(server).toMatchObject({ auth: 'oauth', oauth_status: 'pending', has_api_key: false });
    const authorizationUrl = new URL(server.authorization_url ?? '');
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${remote.url}/authorize`);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('resource')).toBe(`${remote.url}/mcp`);
    expect(authorizationUrl.searchParams.get('redirect_uri')).toBe(`${app.url}/v1/agent/mcp-servers/oauth/callback`);
    callbackUrl = await consent(server.authorization_url ?? '');
    expect(callbackUrl.origin + callbackUrl.pathname).toBe(`${app.url}/v1/agent/mcp-servers/oauth/callback`);
    expect(callbackUrl.searchParams.get('code')).toBeTruthy();

    // Before the callback, a run cannot use the server, and says why.
    upstream.next({ kind: 'reply', content: '```json\n{"answer": "no tools"}\n```' });
    const early = (await (
      await call(`${app.url}/v1/agent/execute`, {
        key,
        json: { model: 'prism-orion-2', config: { prompt: 'x', mcp_servers: ['remote'] } },
      })
    ).json()) as ExecutionWire;
    expect(early.usage.message).toMatch(/remote: MCP server 'remote' needs a person to sign in/);
  });

  it('the callback (no key, as a browser) exchanges the code; its state cannot be used again', async () => {
    const landed = await call(callbackUrl.href);
    expect(landed.status).toBe(200);
    const body = await landed.text();
    expect(JSON.parse(body)).toMatchObject({ id: serverId, oauth_status: 'signed_in' });
    expect(body).not.toMatch(/mcp_at_|mcp_rt_|access_token|refresh_token/);

    const replay = await call(callbackUrl.href);
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { detail: { error: { code: string } } }).detail.error.code).toBe(
      'oauth_state_invalid',
    );
    const madeUp = await call(`${app.url}/v1/agent/mcp-servers/oauth/callback?state=made-up&code=x`);
    expect(madeUp.status).toBe(400);
  });

  it('never returns the tokens, and stores them only sealed', async () => {
    const { sealed, grant } = await storedGrant();
    expect(grant.tokens?.access_token).toMatch(/^mcp_at_/);
    expect(sealed).toMatch(/^v1\./);
    expect(sealed).not.toContain(grant.tokens?.access_token ?? 'x');
    for (const path of ['/v1/agent/mcp-servers', `/v1/agent/mcp-servers/${serverId}`]) {
      const text = await (await call(`${app.url}${path}`, { key })).text();
      expect(text).toContain(serverId);
      expect(text).toContain('"oauth_status":"signed_in"');
      expect(text).not.toContain(grant.tokens?.access_token ?? 'x');
      expect(text).not.toContain(grant.tokens?.refresh_token ?? 'x');
    }
  });

  it('runs an agent whose planner calls the remote tool with the token', async () => {
    const { run, toolText } = await listFilesRun();
    expect(run.status).toBe('completed');
    expect(run.steps.find((s) => s.kind === 'tool')).toMatchObject({ name: 'remote__list_files', error: null });
    expect(toolText).toContain('remote-note.txt');
  });

  it('refreshes an access token that expired before the next run', async () => {
    const before = (await storedGrant()).grant.tokens;
    await sleep(2_500); // the remote's access tokens live 2 s
    const { run, toolText } = await listFilesRun();
    expect(run.status).toBe('completed');
    expect(toolText).toContain('remote-note.txt');
    const after = (await storedGrant()).grant.tokens;
    expect(after?.access_token).toMatch(/^mcp_at_/);
    expect(after?.access_token).not.toBe(before?.access_token);
    // The remote rotates refresh tokens: the new one is kept.
    expect(after?.refresh_token).not.toBe(before?.refresh_token);
  });

  it('an access token the server refuses (401) before it expires is refreshed and the call made again', async () => {
    // As if the server had forgotten the token: the stored one is replaced by one it never issued, said to live on.
    const { orgId } = await app.container.services.accounts.addCredits('oauth-agents', 0);
    const { grant } = await storedGrant();
    const box = createSecretBox(SECRETS_KEY);
    const forgotten = {
      ...grant,
      tokens: { ...grant.tokens, access_token: 'mcp_at_forgotten' },
      expiresAt: Date.now() + 3_600_000,
    };
    await app.container.stores.mcpServers.updateOAuth(orgId, serverId, {
      secretSealed: box.seal(JSON.stringify(forgotten), serverId),
      oauthStatus: 'signed_in',
      oauthStateHash: null,
      oauthStateExpiresAt: null,
    });
    const { run, toolText } = await listFilesRun();
    expect(run.status).toBe('completed');
    expect(toolText).toContain('remote-note.txt');
    const after = (await storedGrant()).grant.tokens;
    expect(after?.access_token).toMatch(/^mcp_at_/);
    expect(after?.access_token).not.toBe('mcp_at_forgotten');
    expect(after?.refresh_token).not.toBe(grant.tokens?.refresh_token);
  });

  it('a grant revoked during a run: the call fails saying a person must sign in again; signing in again brings it back', async () => {
    // The grant is revoked at the remote while the planner is thinking: after the run read the remote's tools and
    // before it calls one, so the call finds its token refused and its refresh refused too.
    const seen = upstream.requests.length;
    const revokedWhileThinking = (async () => {
      while (upstream.requests.length <= seen) await sleep(20);
      const { grant } = await storedGrant();
      const revoked = await fetch(`${remote.url}/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          token: grant.tokens?.refresh_token ?? '',
          client_id: String(grant.client.client_id),
        }),
      });
      expect(revoked.status).toBe(200);
    })();
    upstream.next(
      {
        kind: 'reply',
        toolCalls: [{ id: 'call_1', name: 'remote__list_files', arguments: '{}' }],
        waitFor: revokedWhileThinking,
      },
      { kind: 'reply', content: '```json\n{"answer": "signed out"}\n```' },
    );
    const run = (await (
      await call(`${app.url}/v1/agent/execute`, {
        key,
        json: { model: 'prism-orion-2', config: { prompt: 'x', mcp_servers: ['remote'] } },
      })
    ).json()) as ExecutionWire;
    await revokedWhileThinking;
    expect(run.status).toBe('completed');
    expect(run.steps.find((s) => s.kind === 'tool')?.error).toMatch(
      /^MCP server 'remote' needs a person to sign in \(the refresh was refused \(invalid_grant.*oauth\/start/,
    );

    // The server now needs a sign-in: shown, refused by its tools route, said in the next run.
    const server = (await (await call(`${app.url}/v1/agent/mcp-servers/${serverId}`, { key })).json()) as ServerWire;
    expect(server.oauth_status).toBe('needs_sign_in');
    const tools = await call(`${app.url}/v1/agent/mcp-servers/${serverId}/tools`, { key });
    expect(tools.status).toBe(409);
    expect(((await tools.json()) as { detail: { error: { code: string } } }).detail.error.code).toBe(
      'mcp_server_sign_in_required',
    );

    upstream.next({ kind: 'reply', content: '```json\n{"answer": "no tools"}\n```' });
    const next = (await (
      await call(`${app.url}/v1/agent/execute`, {
        key,
        json: { model: 'prism-orion-2', config: { prompt: 'x', mcp_servers: ['remote'] } },
      })
    ).json()) as ExecutionWire;
    expect(next.usage.message).toMatch(
      /remote: MCP server 'remote' needs a person to sign in \(its sign-in was lost\)/,
    );

    const started = await call(`${app.url}/v1/agent/mcp-servers/${serverId}/oauth/start`, { key, method: 'POST' });
    expect(started.status).toBe(200);
    const again = await consent(((await started.json()) as ServerWire).authorization_url ?? '');
    // A state is good for SIGN_IN_TTL_MS: the store does not hand it out once that has passed.
    const stateHash = createHash('sha256')
      .update(again.searchParams.get('state') ?? '')
      .digest('hex');
    const late = new Date(Date.now() + SIGN_IN_TTL_MS + 1000);
    expect(await app.container.stores.mcpServers.takeOAuthState(stateHash, late)).toBeNull();
    expect((await call(again.href)).status).toBe(200);
    const { run: back, toolText } = await listFilesRun();
    expect(back.status).toBe('completed');
    expect(toolText).toContain('remote-note.txt');
  });
});
