/**
 * A company's MCP server behind its own OAuth 2.1 authorization server that offers no dynamic client registration:
 * Prism must sign in as the client the company issued (`clientId`, `clientSecret`), authenticated at the token
 * endpoint the one way the metadata names (`client_secret_basic` or `client_secret_post`). Both on one loopback
 * port: protected-resource and authorization-server metadata, `/authorize` (the person's consent: it redirects
 * straight back with a code), `/token` (PKCE-checked codes; refresh tokens rotated, and one spent twice taken as
 * stolen: the whole grant is revoked, as OAuth 2.1 advises) and `/mcp` (the SDK's McpServer, stateless, one tool
 * `whoami`, answering only current access tokens).
 *
 * `holdRefreshes()` keeps refresh answers back until released (the refresh itself, and any reuse it is, is taken
 * in at once), so a test can make two replicas refresh at the same moment.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post';

export interface RemoteOAuthMcpServer {
  /** The MCP endpoint (`…/mcp`). */
  url: string;
  /** How the client authenticated at each token request (`basic`, `post`, or `none` when it did not). */
  tokenAuth: ('basic' | 'post' | 'none')[];
  /** Refresh requests received (each with the refresh token it spent). */
  readonly refreshes: number;
  /** Times a refresh token was spent twice (each revoked the grant). */
  readonly reuses: number;
  /** Holds refresh answers back until the returned function is called. */
  holdRefreshes(): () => void;
  close(): Promise<void>;
}

interface Options {
  clientId: string;
  clientSecret: string;
  authMethod: ClientAuthMethod;
  /** How long access tokens live (default 3600 s). */
  accessTtlS?: number;
}

export async function startRemoteOAuthMcpServer(options: Options): Promise<RemoteOAuthMcpServer> {
  const codes = new Map<string, { challenge: string; redirectUri: string }>();
  const accessTokens = new Map<string, number>(); // token -> expires at (ms)
  let currentRefresh: string | null = null;
  const spentRefresh = new Set<string>();
  const tokenAuth: RemoteOAuthMcpServer['tokenAuth'] = [];
  let refreshes = 0;
  let reuses = 0;
  let gate: Promise<void> | null = null;
  let origin = '';

  const issue = (): Record<string, unknown> => {
    const access = `at_${randomBytes(12).toString('hex')}`;
    const ttl = options.accessTtlS ?? 3600;
    accessTokens.set(access, Date.now() + ttl * 1000);
    currentRefresh = `rt_${randomBytes(12).toString('hex')}`;
    return { access_token: access, token_type: 'Bearer', expires_in: ttl, refresh_token: currentRefresh };
  };
  const revokeAll = (): void => {
    accessTokens.clear();
    if (currentRefresh) spentRefresh.add(currentRefresh);
    currentRefresh = null;
  };

  /** The client's authentication at the token endpoint: only the method the metadata names is accepted. */
  const authenticated = (req: http.IncomingMessage, form: URLSearchParams): boolean => {
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const kind = basic ? 'basic' : form.has('client_secret') ? 'post' : 'none';
    tokenAuth.push(kind);
    if (options.authMethod === 'client_secret_basic') {
      const [id, secret] = Buffer.from(basic ?? '', 'base64')
        .toString('utf8')
        .split(':')
        .map(decodeURIComponent);
      return kind === 'basic' && id === options.clientId && secret === options.clientSecret;
    }
    return (
      kind === 'post' &&
      form.get('client_id') === options.clientId &&
      form.get('client_secret') === options.clientSecret
    );
  };

  const token = async (req: http.IncomingMessage, form: URLSearchParams): Promise<[number, unknown]> => {
    if (!authenticated(req, form)) return [401, { error: 'invalid_client', error_description: 'client refused' }];
    if (form.get('grant_type') === 'authorization_code') {
      const code = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      const verifier = form.get('code_verifier') ?? '';
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      if (!code || code.challenge !== challenge || code.redirectUri !== form.get('redirect_uri')) {
        return [400, { error: 'invalid_grant', error_description: 'bad code' }];
      }
      return [200, issue()];
    }
    if (form.get('grant_type') === 'refresh_token') {
      refreshes += 1;
      const spent = form.get('refresh_token') ?? '';
      if (spent !== currentRefresh) {
        if (spentRefresh.has(spent)) {
          reuses += 1;
          revokeAll();
        }
        return [400, { error: 'invalid_grant', error_description: 'refresh token reused or unknown' }];
      }
      spentRefresh.add(spent);
      const answer = issue();
      if (gate) await gate;
      return [200, answer];
    }
    return [400, { error: 'unsupported_grant_type' }];
  };

  const mcp = (req: http.IncomingMessage, res: http.ServerResponse, body: unknown): void => {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const expires = accessTokens.get(bearer);
    if (expires === undefined || expires < Date.now()) {
      res
        .writeHead(401, {
          'content-type': 'application/json',
          'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
        })
        .end('{"error":"invalid_token"}');
      return;
    }
    const server = new McpServer({ name: 'company', version: '1.0.0' });
    server.registerTool('whoami', { description: 'Says which OAuth client called.' }, () => ({
      content: [{ type: 'text', text: `signed in as client ${options.clientId}` }],
    }));
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    void server.connect(transport).then(() => transport.handleRequest(req, res, body));
  };

  const json = (res: http.ServerResponse, status: number, value: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(value));
  };

  const httpServer = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', origin);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (url.pathname.startsWith('/.well-known/oauth-protected-resource')) {
        json(res, 200, { resource: `${origin}/mcp`, authorization_servers: [origin] });
      } else if (url.pathname === '/.well-known/oauth-authorization-server') {
        json(res, 200, {
          issuer: origin,
          authorization_endpoint: `${origin}/authorize`,
          token_endpoint: `${origin}/token`,
          response_types_supported: ['code'],
          grant_types_supported: ['authorization_code', 'refresh_token'],
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: [options.authMethod],
        });
      } else if (url.pathname === '/authorize') {
        const q = url.searchParams;
        const redirectUri = q.get('redirect_uri') ?? '';
        if (q.get('client_id') !== options.clientId || q.get('code_challenge_method') !== 'S256' || !redirectUri) {
          json(res, 400, { error: 'invalid_request', error_description: 'unknown client' });
          return;
        }
        const code = randomBytes(12).toString('hex');
        codes.set(code, { challenge: q.get('code_challenge') ?? '', redirectUri });
        const back = new URL(redirectUri);
        back.searchParams.set('code', code);
        back.searchParams.set('state', q.get('state') ?? '');
        res.writeHead(302, { location: back.href }).end();
      } else if (url.pathname === '/token' && req.method === 'POST') {
        void token(req, new URLSearchParams(text)).then(([status, value]) => json(res, status, value));
      } else if (url.pathname === '/mcp' && req.method === 'POST') {
        mcp(req, res, text ? (JSON.parse(text) as unknown) : undefined);
      } else {
        json(res, 404, { error: 'not_found' });
      }
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
  return {
    url: `${origin}/mcp`,
    tokenAuth,
    get refreshes() {
      return refreshes;
    },
    get reuses() {
      return reuses;
    },
    holdRefreshes() {
      let release = (): void => undefined;
      gate = new Promise<void>((resolve) => {
        release = () => {
          gate = null;
          resolve();
        };
      });
      return release;
    },
    async close() {
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}
