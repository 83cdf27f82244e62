/**
 * OAuth for the new clients: a Client ID Metadata Document instead of registration, and RFC 9207's `iss` on the
 * answer. Plain HTTP plays the client (the SDK's v1 client insists on an https document URL, which a loopback test
 * server cannot give without a certificate): the metadata says both are supported; an authorization request whose
 * client_id is the document's URL shows the consent page naming the client as the document does, comes back with
 * the code and the issuer, and the code buys a token that a 2026-07-28 client uses on /mcp. A document that names
 * another client_id, or that cannot be fetched, is refused before any consent.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { answerConsent, TEST_REDIRECT } from '../../helpers/oauth-test-client';
import { connectModern, MODERN } from '../../helpers/mcp-modern-client';
import { startTestApp, type TestApp } from '../../helpers/test-app';

jest.setTimeout(60_000);

describe('MCP OAuth: Client ID Metadata Documents and iss', () => {
  let app: TestApp;
  let key: string;
  let docs: http.Server;
  let base: string;
  const served = new Map<string, unknown>();

  beforeAll(async () => {
    // URL client ids on loopback are private addresses: allowed here as in a development set-up.
    app = await startTestApp({ PRISM_ALLOW_PRIVATE_URLS: '1' });
    key = await app.createKey('cimd-org', 'pro');
    docs = http.createServer((req, res) => {
      const doc = served.get(req.url ?? '');
      if (doc === undefined) return void res.writeHead(404).end();
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(doc));
    });
    await new Promise<void>((resolve) => docs.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(docs.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => docs.close(resolve));
    await app.close();
  });

  const authorizeUrl = (clientId: string, challenge: string): URL => {
    const url = new URL(`${app.url}/authorize`);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: TEST_REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'st-1',
      scope: 'mcp',
      resource: `${app.url}/mcp`,
    }).toString();
    return url;
  };

  it('advertises URL client ids and the iss parameter', async () => {
    const metadata = (await (await fetch(`${app.url}/.well-known/oauth-authorization-server`)).json()) as Record<
      string,
      unknown
    >;
    expect(metadata).toMatchObject({
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
    expect(metadata.registration_endpoint).toBeDefined();
  });

  it('signs in a client by its metadata document: the consent page names it, the answer carries iss', async () => {
    const clientId = `${base}/clients/notes-app.json`;
    served.set('/clients/notes-app.json', {
      client_id: clientId,
      client_name: 'Notes App (CIMD)',
      redirect_uris: [TEST_REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const pages: string[] = [];
    const landed = await answerConsent(authorizeUrl(clientId, challenge), { action: 'approve', apiKey: key }, (h) =>
      pages.push(h),
    );
    expect(pages[0]).toContain('Notes App (CIMD)');
    const metadata = (await (await fetch(`${app.url}/.well-known/oauth-authorization-server`)).json()) as {
      issuer: string;
    };
    expect(landed.searchParams.get('iss')).toBe(metadata.issuer);
    expect(landed.searchParams.get('state')).toBe('st-1');
    const code = landed.searchParams.get('code');
    expect(code).toBeTruthy();
    const token = (await (
      await fetch(`${app.url}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: String(code),
          redirect_uri: TEST_REDIRECT,
          client_id: clientId,
          code_verifier: verifier,
          resource: `${app.url}/mcp`,
        }),
      })
    ).json()) as { access_token?: string };
    expect(token.access_token).toBeTruthy();
    const client = await connectModern(app.url, `Bearer ${String(token.access_token)}`);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('upload_file');
    } finally {
      await client.close();
    }
  });

  it('refuses a document that names another client, or that is not there, before any consent', async () => {
    const clientId = `${base}/clients/impostor.json`;
    served.set('/clients/impostor.json', {
      client_id: `${base}/clients/someone-else.json`,
      client_name: 'Impostor',
      redirect_uris: [TEST_REDIRECT],
    });
    const mismatched = await fetch(authorizeUrl(clientId, 'x'.repeat(43)), { redirect: 'manual' });
    expect(mismatched.status).toBe(400);
    expect(await mismatched.text()).toMatch(/another client_id/);
    const missing = await fetch(authorizeUrl(`${base}/clients/missing.json`, 'x'.repeat(43)), { redirect: 'manual' });
    expect(missing.status).toBe(400);
    expect(await missing.text()).toMatch(/answered 404/);
  });
});
