/**
 * The OAuth consent page in a real browser (headless Chromium through playwright-core): a client registers, a
 * person opens the authorization URL, reads who asks and where they go back to, types a wrong key (the page says
 * so), then their key, approves, and the browser is sent to the client's redirect URI with a code that the client
 * exchanges (PKCE) for a token `/mcp` accepts. Skipped with one line when no Chromium is installed.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { chromium } from 'playwright-core';
import { TEST_REDIRECT } from '../../helpers/oauth-test-client';
import { call, startTestApp, type TestApp } from '../../helpers/test-app';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p));
const describeWithBrowser = CHROMIUM ? describe : describe.skip;
if (!CHROMIUM) console.warn('mcp-oauth-browser: no Chromium installed (apt-get install -y chromium); skipped');

jest.setTimeout(90_000);

describeWithBrowser('the OAuth consent page in headless Chromium', () => {
  let app: TestApp;
  let key: string;

  beforeAll(async () => {
    app = await startTestApp();
    key = await app.createKey('browser-people', 'pro');
  });
  afterAll(() => app.close());

  it('signs a person in with their API key and sends the browser back with a code the client exchanges', async () => {
    const registered = (await (
      await call(`${app.url}/register`, {
        json: {
          client_name: 'Browser Test Client',
          redirect_uris: [TEST_REDIRECT],
          token_endpoint_auth_method: 'none',
        },
      })
    ).json()) as { client_id: string };
    const verifier = randomBytes(32).toString('base64url');
    const authorize = new URL('/authorize', app.url);
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: registered.client_id,
      redirect_uri: TEST_REDIRECT,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      resource: `${app.url}/mcp`,
      state: 'browser-state',
    })) {
      authorize.searchParams.set(k, v);
    }

    const browser = await chromium.launch({ executablePath: CHROMIUM as string, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage();
      // Nothing listens on the redirect URI: catch the navigation to it.
      let landed: URL | null = null;
      await page.route(`${TEST_REDIRECT}**`, async (route) => {
        landed = new URL(route.request().url());
        await route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the client' });
      });
      await page.goto(authorize.href);
      expect(await page.textContent('#client-name')).toBe('Browser Test Client');
      expect(await page.textContent('#redirect-host')).toBe('127.0.0.1:9');

      await page.fill('#api_key', 'prism_not_a_key');
      await page.click('#approve');
      expect(await page.textContent('#error')).toMatch(/Invalid API Key/);

      await page.fill('#api_key', key);
      await page.click('#approve');
      await page.waitForURL(`${TEST_REDIRECT}**`);
      const back = landed as URL | null;
      expect(back?.searchParams.get('state')).toBe('browser-state');
      const code = back?.searchParams.get('code');
      expect(code).toEqual(expect.any(String));

      const tokens = (await (
        await fetch(`${app.url}/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'authorization_code',
            code: String(code),
            code_verifier: verifier,
            redirect_uri: TEST_REDIRECT,
            client_id: registered.client_id,
            resource: `${app.url}/mcp`,
          }),
        })
      ).json()) as { access_token: string };
      const init = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'browser', version: '1' } },
      };
      const res = await call(`${app.url}/mcp`, {
        key: tokens.access_token,
        json: init,
        headers: { accept: 'application/json, text/event-stream' },
      });
      expect(res.status).toBe(200);
      await res.body?.cancel();
    } finally {
      await browser.close();
    }
  });
});
