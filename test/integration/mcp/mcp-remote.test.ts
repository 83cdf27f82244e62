/**
 * `mcp-remote`, the bridge Claude Desktop and other stdio-only clients use for remote servers, against a started
 * Prism's `/mcp`, as a person meets it: launched with no key (the docs' snippet), it discovers the authorization
 * server from the 401, registers itself, prints the sign-in URL (and asks the system browser to open it); the
 * person approves on the consent page; the browser is sent to mcp-remote's own localhost callback; it exchanges
 * the code (PKCE) and the MCP SDK client, over stdio through it, lists and calls tools as that person. Its next
 * launch reuses the stored tokens. A revoked token and a wrong key are told apart in its log in words a person can
 * act on. Its token store is a temporary folder (MCP_REMOTE_CONFIG_DIR), never the real home.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { toolOutput } from '../../helpers/mcp-client';
import { launchMcpRemote, makeRemoteHome, MCP_REMOTE, type RemoteHome } from '../../helpers/mcp-remote-client';
import { answerConsent } from '../../helpers/oauth-test-client';
import { call, startTestApp, uploadFile, type TestApp } from '../../helpers/test-app';

jest.setTimeout(120_000);

const DOC = fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'docs', 'mcp-clients.md'), 'utf8');
const SIGN_IN = /Please authorize this client by visiting:\s*\n(\S+)/;

/** The `args` of the docs' Claude Desktop snippet for mcp-remote, after `-y mcp-remote`, on this app's URL. */
function snippetArgs(appUrl: string): string[] {
  const found = /<!-- snippet: claude-desktop-mcp-remote -->\s*```json\n([\s\S]*?)```/.exec(DOC);
  if (!found?.[1]) throw new Error('docs/mcp-clients.md has no snippet claude-desktop-mcp-remote');
  const server = (JSON.parse(found[1]) as { mcpServers: { prism: { command: string; args: string[] } } }).mcpServers
    .prism;
  expect(server.command).toBe('npx');
  expect(server.args.slice(0, 2)).toEqual(['-y', 'mcp-remote']);
  return server.args.slice(2).map((a) => a.split('http://localhost:3000').join(appUrl));
}

/** One of the files mcp-remote keeps in its config folder (`<hash>_tokens.json`, `<hash>_client_info.json`). */
function stored<T>(where: RemoteHome, name: string): T {
  const dir = path.join(where.configDir, 'mcp-remote-v1');
  const file = fs.readdirSync(dir).find((f) => f.endsWith(`_${name}`));
  if (!file) throw new Error(`no ${name} in ${dir}: ${fs.readdirSync(dir).join(', ')}`);
  return JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as T;
}
const storedTokens = (where: RemoteHome) =>
  stored<{ access_token: string; refresh_token?: string }>(where, 'tokens.json');

const describeWithMcpRemote = fs.existsSync(MCP_REMOTE) ? describe : describe.skip;
if (!fs.existsSync(MCP_REMOTE)) console.warn('mcp-remote: not installed (npm ci installs it); skipped');

describeWithMcpRemote('mcp-remote against /mcp (OAuth as a desktop client does it)', () => {
  let app: TestApp;
  let key: string;
  let root: string;
  let where: RemoteHome;

  beforeAll(async () => {
    app = await startTestApp();
    key = await app.createKey('remote-people', 'pro');
    expect((await uploadFile(app.url, key, 'hello', { filename: 'remote-mine.txt' })).status).toBe(201);
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-mcp-remote-'));
    where = makeRemoteHome(root);
  });
  afterAll(async () => {
    await app.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('signs in through the consent page and its localhost callback, then lists and calls tools as that person', async () => {
    const run = launchMcpRemote(snippetArgs(app.url), where);
    try {
      const [, printed] = await run.waitForLog(SIGN_IN);
      const authorize = new URL(String(printed));
      expect(`${authorize.origin}${authorize.pathname}`).toBe(`${app.url}/authorize`);
      expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
      expect(authorize.searchParams.get('resource')).toBe(`${app.url}/mcp`);
      // Its redirect URI is its own callback server on this machine.
      const redirect = new URL(String(authorize.searchParams.get('redirect_uri')));
      expect(redirect.hostname).toMatch(/^(localhost|127\.0\.0\.1)$/);

      // The person approves with their key; the browser is sent to mcp-remote's callback with the code.
      const back = await answerConsent(authorize, { action: 'approve', apiKey: key });
      expect(`${back.origin}${back.pathname}`).toBe(`${redirect.origin}${redirect.pathname}`);
      expect(back.searchParams.get('code')).toEqual(expect.any(String));
      await run.waitForLog(/Waiting for authorization/);
      const landing = await fetch(back);
      expect(landing.status).toBe(200);
      expect(await landing.text()).toMatch(/Authorization successful/);

      await run.connected;
      const tools = (await run.client.listTools()).tools.map((t) => t.name);
      expect(tools).toEqual(expect.arrayContaining(['extract_document', 'upload_file', 'list_files']));
      const files = toolOutput((await run.client.callTool({ name: 'list_files', arguments: {} })) as CallToolResult);
      expect((files.items as { filename: string }[]).map((f) => f.filename)).toContain('remote-mine.txt');
      // It asked the system to open the same URL it printed.
      expect(run.opened()).toContain(authorize.href);
    } finally {
      await run.close();
    }
    // Its tokens are Prism's, kept in the folder it was given, and nothing went to the home folder.
    expect(storedTokens(where).access_token).toMatch(/^mcp_at_/);
    expect(fs.existsSync(path.join(where.home, '.mcp-auth'))).toBe(false);
  });

  it('reuses the stored tokens on its next launch without asking anyone', async () => {
    const run = launchMcpRemote(snippetArgs(app.url), where);
    try {
      await run.connected;
      expect((await run.client.listTools()).tools.length).toBeGreaterThan(0);
      expect(run.log()).not.toMatch(SIGN_IN);
    } finally {
      await run.close();
    }
  });

  it('asks the person to sign in again once the grant is revoked, and then works again', async () => {
    // Revoking the grant (as a person does when they disconnect a client) ends its access and refresh tokens.
    const revoked = await call(`${app.url}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: storedTokens(where).access_token,
        client_id: stored<{ client_id: string }>(where, 'client_info.json').client_id,
      }),
    });
    expect(revoked.status).toBe(200);
    const before = storedTokens(where).access_token;
    const run = launchMcpRemote(snippetArgs(app.url), where);
    try {
      const [, printed] = await run.waitForLog(SIGN_IN);
      const back = await answerConsent(new URL(String(printed)), { action: 'approve', apiKey: key });
      // Here mcp-remote prints the URL before its callback server listens: a person is never that quick.
      await run.waitForLog(/Waiting for authorization/);
      expect((await fetch(back)).status).toBe(200);
      await run.connected;
      expect((await run.client.listTools()).tools.length).toBeGreaterThan(0);
    } finally {
      await run.close();
    }
    expect(storedTokens(where).access_token).not.toBe(before);
  });

  it('a wrong key in --header: the consent page it opens says the key is invalid and what to do', async () => {
    // mcp-remote answers the 401 by starting a sign-in and logs nothing of the challenge's "Invalid API Key";
    // the page the person is sent to is where Prism can say it.
    const run = launchMcpRemote([`${app.url}/mcp`, '--header', 'Authorization: Bearer prism_not_a_key'], where);
    try {
      const [, printed] = await run.waitForLog(SIGN_IN);
      const page = await fetch(String(printed));
      expect(page.status).toBe(200);
      const notice = /<p class="error" role="alert" id="notice">([^<]*)<\/p>/.exec(await page.text())?.[1];
      expect(notice).toMatch(/^Invalid API Key: the key in this client’s configuration matches no active Prism key/);
      expect(notice).toMatch(/replace it with a valid key, or remove the Authorization header/);
    } finally {
      await run.close();
    }
  });

  it('connects anonymously with the sentinel in --header, without any sign-in', async () => {
    const run = launchMcpRemote([`${app.url}/mcp`, '--header', 'Authorization: Bearer prism'], where);
    try {
      // The anonymous sentinel is not refused: mcp-remote connects, with the anonymous tool list.
      await run.connected;
      expect((await run.client.listTools()).tools.map((t) => t.name)).toContain('list_hub_domains');
      expect(run.log()).not.toMatch(SIGN_IN);
    } finally {
      await run.close();
    }
  });

  it('connects with a key in --header, without any sign-in', async () => {
    const run = launchMcpRemote([`${app.url}/mcp`, '--header', `Authorization: Bearer ${key}`], where);
    try {
      await run.connected;
      const files = toolOutput((await run.client.callTool({ name: 'list_files', arguments: {} })) as CallToolResult);
      expect((files.items as { filename: string }[]).map((f) => f.filename)).toContain('remote-mine.txt');
      expect(run.log()).not.toMatch(SIGN_IN);
    } finally {
      await run.close();
    }
  });
});
