/**
 * Prism as the authorization server of its own `/mcp` (MCP authorization spec, OAuth 2.1): the SDK's
 * `mcpAuthRouter` serves the metadata documents (RFC 9728 protected resource, RFC 8414 authorization server),
 * dynamic client registration (RFC 7591), `/authorize` (client and redirect checks), `/token` (PKCE S256) and
 * `/revoke`; the provider below hands each step to the MCP OAuth service, and the consent page and its POST are
 * Prism's own. Clients may also sign in without registering, by a URL client id (a Client ID Metadata Document,
 * client-metadata.ts), and every authorization answer names its issuer (RFC 9207 `iss`). docs/mcp-clients.md
 * says how this sits beside API keys and anonymous use.
 *
 * The issuer is PRISM_PUBLIC_URL or, unset, the origin of the request (its Host must pass the `/mcp` host check);
 * a router is built per origin on first use, at most a few, since the SDK fixes its URLs at construction.
 */
import { createHash } from 'node:crypto';
import express, { Router, type Request, type RequestHandler, type Response } from 'express';
import { mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import {
  InvalidClientError,
  InvalidGrantError,
  InvalidRequestError,
  InvalidScopeError,
  InvalidTargetError,
  type OAuthError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { OrgPrincipal } from '../../domain/account';
import { clientAddressKey } from '../../metering/caller-key';
import { createRateLimiter } from '../../metering/rate-limiter';
import type { RateLimitStore } from '../../metering/ports';
import { InvalidApiKeyError } from '../../domain/errors';
import { MCP_SCOPE, OAuthGrantError } from '../../domain/oauth';
import type { Logger } from '../../lib/logger';
import type { AuthService } from '../../services/auth.service';
import { grantableScopes, type McpOAuthService } from '../../services/mcp-oauth.service';
import { ClientMetadataError, createClientMetadataCache, isUrlClientId } from './client-metadata';
import { CONSENT_PATH, csrfCookieName, renderConsentPage, renderMessagePage, setPageHeaders } from './consent-page';
import { refusalNotice, refusedCredentialOf, REFUSED_FIELD, registrationVerdict } from './refused-credential';

export interface McpOAuthOptions {
  oauth: McpOAuthService;
  auth: AuthService;
  /** In single-user mode the owner may approve without a key. */
  singleUser: boolean;
  ownerPrincipal: () => Promise<OrgPrincipal | null>;
  publicUrl: string | undefined;
  /** The `/mcp` host allow-list: only these hosts get an issuer of their own. */
  allowedHosts: readonly string[];
  /** Where the endpoints' per-address windows are kept (this process's memory: the entry point hands it in). */
  limitStore: RateLimitStore;
  logger: Logger;
  /** Whether URL client ids (client-metadata.ts) may point at private addresses (PRISM_ALLOW_PRIVATE_URLS). */
  allowPrivateUrls?: boolean;
}

/** Where a client learns how to sign in to `/mcp` at `origin`. */
export const resourceUrlOf = (origin: string): string => `${origin}/mcp`;
export const resourceMetadataUrlOf = (origin: string): string => `${origin}/.well-known/oauth-protected-resource/mcp`;

const OAUTH_PATHS = new Set([
  '/authorize',
  '/token',
  '/register',
  '/revoke',
  '/.well-known/oauth-authorization-server',
  '/.well-known/oauth-protected-resource',
  '/.well-known/oauth-protected-resource/mcp',
]);

/** The SDK's own body parser for `/register` (same limit), run early when the registration carries a credential. */
const registrationJson = express.json();

/** Most per-origin routers kept (each host name a client used to reach this Prism). */
const MAX_ORIGINS = 8;

/**
 * Requests per client address over all the OAuth endpoints. Ours instead of the SDK's express-rate-limit, which
 * must be built at start-up (the routers here are built per origin on first use) and throws behind a proxy
 * unless express trusts it.
 */
const OAUTH_WINDOWS = [
  { name: 'minute' as const, lengthS: 60, limit: 60 },
  { name: 'hour' as const, lengthS: 3600, limit: 600 },
];
const SDK_LIMITS_OFF = { rateLimit: false } as const;

/**
 * The origin OAuth URLs are built on for this request, or null: when its host is not one `/mcp` answers for, or
 * when the SDK would refuse it as an issuer (plain http on a host other than localhost or 127.0.0.1): a challenge
 * there would send clients to metadata that does not exist.
 */
export function oauthOriginOf(
  req: Request,
  options: Pick<McpOAuthOptions, 'publicUrl' | 'allowedHosts'>,
): string | null {
  if (options.publicUrl) {
    const url = new URL(options.publicUrl);
    return issuable(url) ? url.origin : null;
  }
  const host = req.get('host');
  if (!host) return null;
  let url: URL;
  try {
    url = new URL(`${req.protocol}://${host}`);
  } catch {
    return null;
  }
  const allowed = options.allowedHosts.includes('*') || options.allowedHosts.includes(url.hostname.toLowerCase());
  return allowed && issuable(url) ? url.origin : null;
}

/** What the SDK accepts as an issuer: https, or http on localhost or 127.0.0.1. */
const issuable = (url: URL): boolean =>
  url.protocol === 'https:' || url.hostname === 'localhost' || url.hostname === '127.0.0.1';

/** The OAuth endpoints, the metadata documents and the consent form's POST, mounted at the app root. */
export function mcpOAuthRoutes(options: McpOAuthOptions): Router {
  const routers = new Map<string, RequestHandler | null>();
  const documents = createClientMetadataCache({ allowPrivate: options.allowPrivateUrls ?? false });
  const routerFor = (origin: string): RequestHandler | null => {
    let handler = routers.get(origin);
    if (handler === undefined) {
      handler = buildRouter(origin, options, documents);
      if (routers.size >= MAX_ORIGINS) routers.delete(routers.keys().next().value as string);
      routers.set(origin, handler);
    }
    return handler;
  };
  const limiter = createRateLimiter(options.limitStore, OAUTH_WINDOWS);
  const limited: RequestHandler = (req, res, next) => {
    void limiter.check(`oauth:${clientAddressKey(req.ip ?? 'unknown')}`).then((decision) => {
      if (decision.allowed) return next();
      res.setHeader('Retry-After', String(decision.retryAfterS));
      res.status(429).json({ error: 'too_many_requests', error_description: `Rate limit exceeded: ${decision.label}` });
    }, next);
  };
  const router = Router();
  router.use((req, res, next) => {
    if (!OAUTH_PATHS.has(req.path)) return next();
    const origin = oauthOriginOf(req, options);
    const handler = origin === null ? null : routerFor(origin);
    if (!handler) return next();
    // The SDK's handlers answer every request they match; anything else falls through to the 404 handler.
    if (req.method !== 'POST' || req.path !== '/register' || req.get('authorization') === undefined) {
      return limited(req, res, () => handler(req, res, next));
    }
    // A registration that carries a credential: note whether `/mcp` refuses it, for the consent page. The body is
    // read first so that the SDK's handler runs, and reaches the clients store, inside the verdict's context.
    const deps = { auth: options.auth, oauth: options.oauth, resource: resourceUrlOf(String(origin)) };
    return limited(req, res, () =>
      registrationJson(req, res, (error?: unknown) => {
        if (error) {
          next(error);
          return;
        }
        void refusedCredentialOf(req, deps).then(
          (verdict) => registrationVerdict.run(verdict, () => handler(req, res, next)),
          next,
        );
      }),
    );
  });
  router.post(CONSENT_PATH, limited, express.urlencoded({ extended: false, limit: '16kb' }), (req, res) => {
    void consent(req, res, options);
  });
  return router;
}

function buildRouter(
  origin: string,
  options: McpOAuthOptions,
  documents: ReturnType<typeof createClientMetadataCache>,
): RequestHandler | null {
  const resource = resourceUrlOf(origin);
  const provider = createProvider(options, resource, origin.startsWith('https:'), documents);
  let sdk: RequestHandler;
  try {
    sdk = mcpAuthRouter({
      provider,
      issuerUrl: new URL(origin),
      resourceServerUrl: new URL(resource),
      scopesSupported: [MCP_SCOPE],
      resourceName: 'Prism',
      authorizationOptions: SDK_LIMITS_OFF,
      tokenOptions: SDK_LIMITS_OFF,
      clientRegistrationOptions: SDK_LIMITS_OFF,
      revocationOptions: SDK_LIMITS_OFF,
    });
  } catch (error) {
    // The SDK refuses a plain-http issuer other than localhost: no OAuth on that origin (API keys still work).
    options.logger.warn('mcp oauth unavailable on this origin', { origin, error: String(error) });
    return null;
  }
  // RFC 9728 at the root too (2025-11-25 clients try the path-aware URL, then the root), with the same resource.
  const rootMetadata = {
    resource,
    authorization_servers: [`${origin}/`],
    scopes_supported: [MCP_SCOPE],
    resource_name: 'Prism',
  };
  const router = Router();
  router.get('/.well-known/oauth-protected-resource', (_req, res) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.json(rootMetadata);
  });
  // The SDK's metadata, plus what it does not know Prism does: URL client ids (CIMD) and RFC 9207's `iss`.
  router.get('/.well-known/oauth-authorization-server', (req, res, next) => {
    const json = res.json.bind(res);
    res.json = (body: unknown) =>
      json({
        ...(body as Record<string, unknown>),
        client_id_metadata_document_supported: true,
        authorization_response_iss_parameter_supported: true,
      });
    sdk(req, res, next);
  });
  router.use(sdk);
  return router;
}

function createProvider(
  options: McpOAuthOptions,
  resource: string,
  secure: boolean,
  documents: ReturnType<typeof createClientMetadataCache>,
): OAuthServerProvider {
  const { oauth } = options;
  const clientsStore: OAuthRegisteredClientsStore = {
    async getClient(clientId) {
      if (!isUrlClientId(clientId)) {
        return (await oauth.getClient(clientId)) as OAuthClientInformationFull | undefined;
      }
      let client: Record<string, unknown>;
      try {
        client = await documents.get(clientId);
      } catch (error) {
        if (error instanceof ClientMetadataError) throw new InvalidClientError(error.message);
        throw error;
      }
      // The grants refer to the client by id: the first sign-in records it (a race between replicas is harmless).
      if (!(await oauth.getClient(clientId))) await oauth.registerClient(client).catch(() => undefined);
      return client as unknown as OAuthClientInformationFull;
    },
    async registerClient(client) {
      const verdict = registrationVerdict.getStore() ?? null;
      const stored = await oauth.registerClient(verdict ? { ...client, [REFUSED_FIELD]: verdict } : client);
      const { [REFUSED_FIELD]: _verdict, ...answer } = stored;
      return answer as OAuthClientInformationFull;
    },
  };
  return {
    get clientsStore() {
      return clientsStore;
    },
    async authorize(client, params, res) {
      const asked = params.resource?.href;
      if (asked !== undefined && asked !== resource) {
        throw new InvalidTargetError(`This server issues tokens for ${resource} only.`);
      }
      const scopes = sdkErrors(() => grantableScopes(params.scopes));
      const notice = refusalNotice((client as Record<string, unknown>)[REFUSED_FIELD]);
      const { requestId, csrf } = await oauth.beginAuthorization(client.client_id, {
        redirectUri: params.redirectUri,
        state: params.state ?? null,
        scopes,
        codeChallenge: params.codeChallenge,
        resource,
      });
      setCsrfCookie(res, requestId, csrf, secure);
      setPageHeaders(res);
      res.status(200).send(
        renderConsentPage({
          requestId,
          csrf,
          clientName: client.client_name ?? client.client_id,
          redirectUri: params.redirectUri,
          scopes,
          resource,
          singleUser: options.singleUser,
          ...(notice ? { notice } : {}),
        }),
      );
    },
    challengeForAuthorizationCode: (client, code) => asyncSdkErrors(() => oauth.challengeFor(client.client_id, code)),
    exchangeAuthorizationCode: (client, code, _verifier, redirectUri, asked) =>
      asyncSdkErrors(() => oauth.exchangeCode(client.client_id, code, redirectUri, asked?.href)),
    exchangeRefreshToken: (client, refreshToken, scopes, asked) =>
      asyncSdkErrors(() => oauth.exchangeRefresh(client.client_id, refreshToken, scopes, asked?.href)),
    async verifyAccessToken(token) {
      const verified = await oauth.verifyAccessToken(token);
      if (!verified) throw new InvalidGrantError('Invalid or expired access token');
      return {
        token,
        clientId: verified.clientId,
        scopes: verified.scopes,
        expiresAt: verified.expiresAt,
        resource: new URL(verified.resource),
      };
    },
    revokeToken: (client, request) => oauth.revoke(client.client_id, request.token),
  };
}

/** The service's OAuthGrantError as the SDK's error class of the same code (anything else gives a 500). */
function toSdkError(error: unknown): unknown {
  if (!(error instanceof OAuthGrantError)) return error;
  const classes: Record<OAuthGrantError['oauthCode'], new (message: string) => OAuthError> = {
    invalid_request: InvalidRequestError,
    invalid_grant: InvalidGrantError,
    invalid_client: InvalidClientError,
    invalid_scope: InvalidScopeError,
    invalid_target: InvalidTargetError,
  };
  return new classes[error.oauthCode](error.message);
}

function sdkErrors<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw toSdkError(error);
  }
}

async function asyncSdkErrors<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw toSdkError(error);
  }
}

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');

function setCsrfCookie(res: Response, requestId: string, csrf: string, secure: boolean): void {
  const name = csrfCookieName(sha(requestId), secure);
  const attributes = ['Path=/', 'HttpOnly', 'SameSite=Lax', 'Max-Age=600', ...(secure ? ['Secure'] : [])];
  res.append('Set-Cookie', `${name}=${csrf}; ${attributes.join('; ')}`);
}

function cookieOf(req: Request, name: string): string | null {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return null;
}

/** The consent form's POST: check the CSRF pair, sign the person in, and send the browser back to the client. */
async function consent(req: Request, res: Response, options: McpOAuthOptions): Promise<void> {
  setPageHeaders(res);
  const body = (req.body ?? {}) as Record<string, unknown>;
  const field = (name: string): string => (typeof body[name] === 'string' ? body[name] : '');
  const requestId = field('request_id');
  const csrf = field('csrf');
  const secure = req.protocol === 'https';
  const expired = (): void => {
    res
      .status(400)
      .send(
        renderMessagePage(
          'Sign-in request expired',
          'This sign-in request has expired or was already answered. Start the connection again from your client.',
        ),
      );
  };
  try {
    const pending = requestId ? await options.oauth.pending(requestId) : null;
    if (!pending || !csrf || cookieOf(req, csrfCookieName(sha(requestId), secure)) !== csrf) return expired();
    let principal: OrgPrincipal | null = null;
    if (field('action') === 'approve') {
      const signedIn = await signIn(field('api_key').trim(), req, options);
      if (typeof signedIn === 'string') {
        res
          .status(401)
          .send(renderConsentPage({ requestId, csrf, ...pending, singleUser: options.singleUser, error: signedIn }));
        return;
      }
      principal = signedIn;
    }
    const { url } = await options.oauth.decide(requestId, csrf, principal);
    // RFC 9207: the answer names its issuer (the metadata's `issuer`), so a client talking to several servers
    // can tell which one answered (mix-up attacks).
    const origin = oauthOriginOf(req, options);
    const back = new URL(url);
    if (origin !== null) back.searchParams.set('iss', new URL(origin).href);
    res.redirect(302, back.href);
  } catch (error) {
    if (error instanceof OAuthGrantError) return expired();
    options.logger.error('mcp oauth consent failed', { request_id: req.requestId, error: String(error) });
    res.status(500).send(renderMessagePage('Something went wrong', 'Prism could not record your answer. Try again.'));
  }
}

/** The person behind the form: the key's user, or the owner in single-user mode; a string says why not. */
async function signIn(key: string, req: Request, options: McpOAuthOptions): Promise<OrgPrincipal | string> {
  if (key === '') {
    const owner = options.singleUser ? await options.ownerPrincipal() : null;
    return owner ?? 'Enter a Prism API key to approve.';
  }
  try {
    const principal = await options.auth.authenticate(`Bearer ${key}`, {
      clientIp: req.ip ?? 'unknown',
      surface: 'gateway',
    });
    return principal.kind === 'user' ? principal : 'Enter a Prism API key to approve.';
  } catch (error) {
    if (error instanceof InvalidApiKeyError) return 'Invalid API Key: no active Prism key matches it.';
    throw error;
  }
}
