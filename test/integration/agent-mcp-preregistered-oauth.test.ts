/**
 * Remote MCP servers whose authorization server offers no dynamic client registration (docs/agents.md, "Signing in
 * with OAuth"): the organisation registers the server with the client its operator issued (client_id and
 * client_secret); the sign-in and every refresh use that client, authenticated at the token endpoint the way the
 * server's metadata says (client_secret_post for one server here, client_secret_basic for the other); the secret is
 * never returned nor stored in clear. Without a client id, registration says what to give.
 *
 * Two replicas (two apps on one database: PostgreSQL with PRISM_TEST_BACKEND=postgres…, else one SQLite file) that
 * both find the access token expired at the same moment refresh it once: the second waits for the first's new token
 * instead of spending the rotating refresh token again (which the server takes as theft and answers by revoking the
 * grant).
 */
import { randomBytes } from 'node:crypto';
import { createSecretBox } from '../../src/lib/secret-box';
import type { OAuthGrant } from '../../src/services/agent-mcp/oauth-sign-in';
import { startRemoteOAuthMcpServer, type RemoteOAuthMcpServer } from '../helpers/remote-oauth-mcp-server';
import { startReplicas, type Replicas } from '../helpers/replicas';
import { call, type TestApp } from '../helpers/test-app';

jest.setTimeout(90_000);

interface ServerWire {
  id: string;
  auth: string;
  oauth_status: string | null;
  oauth_client_id: string | null;
  has_client_secret: boolean;
  authorization_url?: string;
}

const SECRETS_KEY = randomBytes(32);
const CLIENT_SECRET = 'cs-issued-by-the-company-0042';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('remote MCP servers with a pre-registered OAuth client', () => {
  let postServer: RemoteOAuthMcpServer;
  let basicServer: RemoteOAuthMcpServer;
  let replicas: Replicas;
  let a: TestApp;
  let b: TestApp;
  let key: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    postServer = await startRemoteOAuthMcpServer({
      clientId: 'prism-post',
      clientSecret: CLIENT_SECRET,
      authMethod: 'client_secret_post',
    });
    basicServer = await startRemoteOAuthMcpServer({
      clientId: 'prism-basic',
      clientSecret: CLIENT_SECRET,
      authMethod: 'client_secret_basic',
    });
    replicas = await startReplicas(2, {
      PRISM_ALLOW_PRIVATE_URLS: '1',
      PRISM_SECRETS_KEY: SECRETS_KEY.toString('hex'),
    });
    [a, b] = replicas.apps as [TestApp, TestApp];
    key = await a.createKey('company-agents');
  });
  afterAll(async () => {
    await replicas?.close();
    await postServer?.close();
    await basicServer?.close();
  });

  const orgId = async (): Promise<string> =>
    (await a.container.services.accounts.addCredits('company-agents', 0)).orgId;
  /** A person signs in: the company's authorization server sends the browser straight back to the callback. */
  const signIn = async (server: ServerWire): Promise<ServerWire> => {
    const consented = await fetch(server.authorization_url ?? '', { redirect: 'manual' });
    expect(consented.status).toBe(302);
    const callback = new URL(consented.headers.get('location') ?? '');
    expect(callback.origin + callback.pathname).toBe(`${a.url}/v1/agent/mcp-servers/oauth/callback`);
    const landed = await call(callback.href);
    expect(landed.status).toBe(200);
    return (await landed.json()) as ServerWire;
  };
  const toolsOn = async (app: TestApp, id: string) => {
    const res = await call(`${app.url}/v1/agent/mcp-servers/${id}/tools`, { key });
    return { status: res.status, body: (await res.json()) as { data?: { name: string }[] } };
  };
  /** The stored grant, opened with the deployment's key (as only Prism can), changed by `change` and sealed again. */
  const changeGrant = async (id: string, change: (grant: OAuthGrant) => OAuthGrant): Promise<OAuthGrant> => {
    const record = await a.container.stores.mcpServers.get(await orgId(), id);
    const box = createSecretBox(SECRETS_KEY);
    const changed = change(JSON.parse(box.open(record?.secretSealed ?? '', id)) as OAuthGrant);
    await a.container.stores.mcpServers.updateOAuth(await orgId(), id, {
      secretSealed: box.seal(JSON.stringify(changed), id),
      oauthStatus: 'signed_in',
      oauthStateHash: null,
      oauthStateExpiresAt: null,
    });
    return changed;
  };

  it.each([
    ['company', () => postServer, 'prism-post', 'post'],
    ['company_basic', () => basicServer, 'prism-basic', 'basic'],
  ] as const)(
    'registers %s with its issued client, signs in as it and authenticates as the metadata says',
    async (name, remote, clientId, sent) => {
      const res = await call(`${a.url}/v1/agent/mcp-servers`, {
        key,
        json: {
          name,
          url: remote().url,
          auth: { type: 'oauth', client_id: clientId, client_secret: CLIENT_SECRET },
        },
      });
      const text = await res.text();
      expect(res.status).toBe(201);
      expect(text).not.toContain(CLIENT_SECRET);
      const server = JSON.parse(text) as ServerWire;
      ids[name] = server.id;
      expect(server).toMatchObject({
        auth: 'oauth',
        oauth_status: 'pending',
        oauth_client_id: clientId,
        has_client_secret: true,
      });
      expect(new URL(server.authorization_url ?? '').searchParams.get('client_id')).toBe(clientId);
      const stored = await a.container.stores.mcpServers.get(await orgId(), server.id);
      expect(stored?.oauthClientSecretSealed).toMatch(/^v1\./);
      expect(JSON.stringify(stored)).not.toContain(CLIENT_SECRET);

      const signedIn = await signIn(server);
      expect(signedIn).toMatchObject({ id: server.id, oauth_status: 'signed_in', has_client_secret: true });
      expect(JSON.stringify(signedIn)).not.toContain(CLIENT_SECRET);
      // The other replica uses the grant the first one stored.
      const tools = await toolsOn(b, server.id);
      expect(tools.status).toBe(200);
      expect(tools.body.data?.map((t) => t.name)).toEqual([`${name}__whoami`]);
      // The refresh uses the same client, the same way.
      await changeGrant(server.id, (grant) => ({ ...grant, expiresAt: Date.now() - 1_000 }));
      expect((await toolsOn(a, server.id)).status).toBe(200);
      expect(remote().refreshes).toBe(1);
      expect(remote().tokenAuth).toEqual([sent, sent]);
      const listed = await (await call(`${b.url}/v1/agent/mcp-servers`, { key })).text();
      expect(listed).not.toContain(CLIENT_SECRET);
    },
  );

  it('without a client id, an authorization server without registration is refused in words that say what to give', async () => {
    const res = await call(`${a.url}/v1/agent/mcp-servers`, {
      key,
      json: { name: 'no_client', url: postServer.url, auth: { type: 'oauth' } },
    });
    expect(res.status).toBe(502);
    const error = ((await res.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe('oauth_sign_in_failed');
    expect(error.message).toMatch(/no dynamic client registration.*auth\.client_id/);
    const secretAlone = await call(`${a.url}/v1/agent/mcp-servers`, {
      key,
      json: { name: 'secret_alone', url: postServer.url, auth: { type: 'oauth', client_secret: 'x' } },
    });
    expect(secretAlone.status).toBe(422);
  });

  it('two replicas that find the token expired at once refresh it once; the second reads the new token', async () => {
    const id = ids.company ?? '';
    const before = await changeGrant(id, (grant) => ({ ...grant, expiresAt: Date.now() - 1_000 }));
    const refreshesBefore = postServer.refreshes;
    const release = postServer.holdRefreshes();
    const onA = toolsOn(a, id);
    while (postServer.refreshes === refreshesBefore) await sleep(10);
    // A's refresh is with the authorization server (its answer held back); B needs a token now too.
    let bSettled = false;
    const onB = toolsOn(b, id).finally(() => {
      bSettled = true;
    });
    // Long enough for B to have sent a refresh of its own if it were going to (the spent token would be a reuse).
    for (let waited = 0; waited < 1_000 && postServer.refreshes === refreshesBefore + 1; waited += 20) await sleep(20);
    expect(bSettled).toBe(false);
    release();
    const [answerA, answerB] = await Promise.all([onA, onB]);
    expect(answerA.status).toBe(200);
    expect(answerB.status).toBe(200);
    expect(answerB.body.data?.map((t) => t.name)).toEqual(['company__whoami']);
    expect(postServer.refreshes).toBe(refreshesBefore + 1);
    expect(postServer.reuses).toBe(0);

    const after = await changeGrant(id, (grant) => grant);
    expect(after.tokens?.refresh_token).not.toBe(before.tokens?.refresh_token);
    const server = (await (await call(`${b.url}/v1/agent/mcp-servers/${id}`, { key })).json()) as ServerWire;
    expect(server.oauth_status).toBe('signed_in');
    expect((await toolsOn(b, id)).status).toBe(200);
  });
});
