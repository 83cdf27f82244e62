/**
 * The rules of Prism's own OAuth 2.1 authorization server for `/mcp` (docs/mcp-clients.md): clients register
 * themselves (public clients only: PKCE protects the code, and no client secret has to be kept anywhere), a person
 * approves a client on the consent page by signing in with an API key (or as the owner in single-user mode), the
 * code is exchanged once for a short-lived access token and a refresh token bound to that person, to the `/mcp`
 * resource URL and to the sign-in key; refresh tokens rotate, and a rotated one used again revokes the whole grant.
 *
 * Every secret (request ids, CSRF tokens, codes, tokens) is random, shown once and stored as its SHA-256 hash.
 * The SDK's handlers (src/mcp/auth/oauth-server.ts) have already checked the client, the redirect URI and PKCE.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { OrgPrincipal } from '../domain/account';
import {
  ACCESS_TOKEN_PREFIX,
  MCP_SCOPE,
  OAuthGrantError,
  REFRESH_TOKEN_PREFIX,
  type OAuthTokenSet,
} from '../domain/oauth';
import { sha256Hex } from '../lib/hash';
import type { OAuthGrant, OAuthRequestRecord, OAuthStore } from '../stores/types';

export interface McpOAuthSettings {
  accessTokenTtlS: number;
  refreshTokenTtlS: number;
}

/** A consent request still waiting for a person. */
export interface PendingAuthorization {
  clientId: string;
  clientName: string;
  redirectUri: string;
  scopes: string[];
  resource: string;
}

/** Where the browser goes after the consent page: the client's redirect URI with `code` or `error`, and `state`. */
export interface AuthorizationRedirect {
  url: string;
}

/** Who an access token acts for. */
export interface VerifiedAccessToken {
  principal: OrgPrincipal;
  clientId: string;
  scopes: string[];
  resource: string;
  /** Unix seconds. */
  expiresAt: number;
}

export interface McpOAuthService {
  registerClient(info: Record<string, unknown>): Promise<Record<string, unknown>>;
  getClient(clientId: string): Promise<Record<string, unknown> | null>;
  /** Stores the request the consent page shows; returns its id and the CSRF token the form must send back. */
  beginAuthorization(
    clientId: string,
    params: { redirectUri: string; state: string | null; scopes: string[]; codeChallenge: string; resource: string },
  ): Promise<{ requestId: string; csrf: string }>;
  pending(requestId: string): Promise<PendingAuthorization | null>;
  /**
   * The person's answer: approve as `principal`, or deny (`principal` null). Single use.
   * @throws OAuthGrantError invalid_request when the request is unknown, expired, used, or the CSRF token is wrong.
   */
  decide(requestId: string, csrf: string, principal: OrgPrincipal | null): Promise<AuthorizationRedirect>;
  challengeFor(clientId: string, code: string): Promise<string>;
  exchangeCode(clientId: string, code: string, redirectUri?: string, resource?: string): Promise<OAuthTokenSet>;
  exchangeRefresh(clientId: string, refreshToken: string, scopes?: string[], resource?: string): Promise<OAuthTokenSet>;
  /** The token's holder, or null for an unknown, expired or revoked token (or one whose sign-in key was revoked). */
  verifyAccessToken(token: string): Promise<VerifiedAccessToken | null>;
  /** Revokes the grant the token belongs to (RFC 7009: unknown tokens are ignored). */
  revoke(clientId: string, token: string): Promise<void>;
}

const CODE_TTL_S = 300;
/** The spec's example lifetime of a pending authorization (`state`): ten minutes. */
const REQUEST_TTL_S = 600;

const secret = (prefix = ''): string => `${prefix}${randomBytes(32).toString('base64url')}`;
const nowS = (): number => Math.floor(Date.now() / 1000);

/** What every operation of the authorization server reads: where grants are kept and how long tokens live. */
export interface McpOAuthDeps {
  store: OAuthStore;
  settings: McpOAuthSettings;
}

export function createMcpOAuthService(deps: McpOAuthDeps): McpOAuthService {
  const { store } = deps;
  return {
    registerClient: (info) => registerClient(deps, info),
    getClient: (clientId) => store.getClient(clientId),
    beginAuthorization: (clientId, params) => beginAuthorization(deps, clientId, params),
    pending: (requestId) => pendingAuthorization(deps, requestId),
    decide: (requestId, csrf, principal) => decideAuthorization(deps, requestId, csrf, principal),
    challengeFor: (clientId, code) => challengeFor(deps, clientId, code),
    exchangeCode: (clientId, code, redirectUri, resource) => exchangeCode(deps, clientId, code, redirectUri, resource),
    exchangeRefresh: (clientId, refreshToken, scopes, resource) =>
      exchangeRefresh(deps, clientId, refreshToken, scopes, resource),
    verifyAccessToken: (token) => verifyAccessToken(deps, token),
    revoke: (clientId, token) => revokeGrantOf(deps, clientId, token),
  };
}

/** Stores a client that registered itself, as a public client (`token_endpoint_auth_method: none`). */
export async function registerClient(
  { store }: McpOAuthDeps,
  info: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  // Public clients only: a secret would have to be stored in plaintext for the SDK's client check.
  const { client_secret: _secret, client_secret_expires_at: _expires, ...rest } = info;
  const client: Record<string, unknown> = { ...rest, token_endpoint_auth_method: 'none' };
  await store.insertClient(String(client.client_id), client);
  return client;
}

/** Stores the request the consent page shows; returns its id and the CSRF token the form must send back. */
export async function beginAuthorization(
  { store }: McpOAuthDeps,
  clientId: string,
  params: { redirectUri: string; state: string | null; scopes: string[]; codeChallenge: string; resource: string },
): Promise<{ requestId: string; csrf: string }> {
  const requestId = secret();
  const csrf = secret();
  const record: OAuthRequestRecord = {
    clientId,
    csrfHash: sha256Hex(csrf),
    params,
    expiresAt: nowS() + REQUEST_TTL_S,
  };
  await store.insertRequest(sha256Hex(requestId), record);
  return { requestId, csrf };
}

/** The consent request `requestId` as the page shows it; null when unknown or expired. */
export async function pendingAuthorization(
  { store }: McpOAuthDeps,
  requestId: string,
): Promise<PendingAuthorization | null> {
  const request = await store.getRequest(sha256Hex(requestId), nowS());
  if (!request) return null;
  const client = await store.getClient(request.clientId);
  return {
    clientId: request.clientId,
    clientName: typeof client?.client_name === 'string' ? client.client_name : request.clientId,
    redirectUri: request.params.redirectUri,
    scopes: request.params.scopes,
    resource: request.params.resource,
  };
}

/** The person's answer to a consent request (see {@link McpOAuthService.decide}): a code, or `access_denied`. */
export async function decideAuthorization(
  { store }: McpOAuthDeps,
  requestId: string,
  csrf: string,
  principal: OrgPrincipal | null,
): Promise<AuthorizationRedirect> {
  const idHash = sha256Hex(requestId);
  const request = await store.getRequest(idHash, nowS());
  if (!request || request.csrfHash !== sha256Hex(csrf) || !(await store.takeRequest(idHash))) {
    throw new OAuthGrantError(
      'invalid_request',
      'This sign-in request has expired or was already answered. Start the connection again from your client.',
    );
  }
  const { params } = request;
  const url = new URL(params.redirectUri);
  if (params.state !== null) url.searchParams.set('state', params.state);
  if (!principal) {
    url.searchParams.set('error', 'access_denied');
    url.searchParams.set('error_description', 'The person declined the connection.');
    return { url: url.href };
  }
  const code = secret();
  await store.insertCode(
    sha256Hex(code),
    {
      grantId: randomUUID(),
      clientId: request.clientId,
      orgId: principal.orgId,
      userId: principal.userId,
      keyId: principal.keyId,
      scopes: params.scopes,
      resource: params.resource,
      codeChallenge: params.codeChallenge,
      redirectUri: params.redirectUri,
      expiresAt: nowS() + CODE_TTL_S,
    },
    nowS(),
  );
  url.searchParams.set('code', code);
  return { url: url.href };
}

/** The PKCE challenge of a code the client `clientId` holds (asked before the exchange). */
export async function challengeFor(deps: McpOAuthDeps, clientId: string, code: string): Promise<string> {
  const record = await deps.store.getCode(sha256Hex(code), nowS());
  // The token endpoint asks for the PKCE challenge first: a replayed code is caught here.
  if (!record) await refuseReplay(deps, sha256Hex(code));
  if (!record || record.clientId !== clientId) {
    throw new OAuthGrantError('invalid_grant', 'The authorization code is unknown, expired or already used.');
  }
  return record.codeChallenge;
}

/** Exchanges a code, once, for an access and a refresh token. */
export async function exchangeCode(
  deps: McpOAuthDeps,
  clientId: string,
  code: string,
  redirectUri?: string,
  resource?: string,
): Promise<OAuthTokenSet> {
  const hash = sha256Hex(code);
  const record = await deps.store.takeCode(hash, nowS());
  if (!record) await refuseReplay(deps, hash);
  if (!record || record.clientId !== clientId) {
    throw new OAuthGrantError('invalid_grant', 'The authorization code is unknown, expired or already used.');
  }
  if (redirectUri !== undefined && redirectUri !== record.redirectUri) {
    throw new OAuthGrantError('invalid_grant', 'redirect_uri differs from the one the code was issued for.');
  }
  checkResource(record.resource, resource);
  const { codeChallenge: _c, redirectUri: _r, expiresAt: _e, ...grant } = record;
  return issue(deps, grant);
}

/** Rotates a refresh token: new tokens for the same grant, or the whole grant revoked when a used one comes back. */
export async function exchangeRefresh(
  deps: McpOAuthDeps,
  clientId: string,
  refreshToken: string,
  scopes?: string[],
  resource?: string,
): Promise<OAuthTokenSet> {
  const { store } = deps;
  const hash = sha256Hex(refreshToken);
  const now = nowS();
  const record = await store.findToken(hash, 'refresh', now);
  if (!record || record.clientId !== clientId) {
    throw new OAuthGrantError('invalid_grant', 'The refresh token is unknown, expired or revoked. Sign in again.');
  }
  if (record.revoked || !(await store.revokeToken(hash, now))) {
    // A rotated token came back: someone kept a copy. End the whole grant (OAuth 2.1 §4.3.1).
    await store.revokeGrant(record.grantId, now);
    throw new OAuthGrantError('invalid_grant', 'The refresh token was already used. Sign in again.');
  }
  checkResource(record.resource, resource);
  const asked = scopes && scopes.length > 0 ? scopes : record.scopes;
  const extra = asked.filter((s) => !record.scopes.includes(s));
  if (extra.length > 0) throw new OAuthGrantError('invalid_scope', `Scope not granted: ${extra.join(' ')}.`);
  return issue(deps, {
    grantId: record.grantId,
    clientId: record.clientId,
    orgId: record.orgId,
    userId: record.userId,
    keyId: record.keyId,
    scopes: asked,
    resource: record.resource,
  });
}

/** The token's holder, or null for an unknown, expired or revoked token (or one whose sign-in key was revoked). */
export async function verifyAccessToken({ store }: McpOAuthDeps, token: string): Promise<VerifiedAccessToken | null> {
  if (!token.startsWith(ACCESS_TOKEN_PREFIX)) return null;
  const record = await store.findToken(sha256Hex(token), 'access', nowS());
  if (!record || record.revoked) return null;
  return {
    principal: {
      kind: 'user',
      orgId: record.orgId,
      userId: record.userId,
      keyId: record.keyId,
      tier: record.tier,
      isSuperuser: record.isSuperuser,
    },
    clientId: record.clientId,
    scopes: record.scopes,
    resource: record.resource,
    expiresAt: record.expiresAt,
  };
}

/** Revokes the grant the token belongs to (RFC 7009: unknown tokens are ignored). */
export async function revokeGrantOf({ store }: McpOAuthDeps, clientId: string, token: string): Promise<void> {
  const kind = token.startsWith(REFRESH_TOKEN_PREFIX) ? 'refresh' : 'access';
  const record = await store.findToken(sha256Hex(token), kind, nowS());
  if (record && record.clientId === clientId) await store.revokeGrant(record.grantId, nowS());
}

/** A new access and refresh token for `grant`, stored as their hashes. */
async function issue({ store, settings }: McpOAuthDeps, grant: OAuthGrant): Promise<OAuthTokenSet> {
  const access = secret(ACCESS_TOKEN_PREFIX);
  const refresh = secret(REFRESH_TOKEN_PREFIX);
  const now = nowS();
  await store.insertTokens([
    { ...grant, tokenHash: sha256Hex(access), kind: 'access', expiresAt: now + settings.accessTokenTtlS },
    { ...grant, tokenHash: sha256Hex(refresh), kind: 'refresh', expiresAt: now + settings.refreshTokenTtlS },
  ]);
  return {
    access_token: access,
    token_type: 'Bearer',
    expires_in: settings.accessTokenTtlS,
    scope: grant.scopes.join(' '),
    refresh_token: refresh,
  };
}

/**
 * When `hash` is a code already exchanged (the store keeps it, redeemed, until it would have expired, so every
 * replica sees it): a copy came back, so the tokens issued for it are revoked (OAuth 2.1 §4.1.3) and it is refused.
 */
async function refuseReplay({ store }: McpOAuthDeps, hash: string): Promise<void> {
  const grantId = await store.redeemedGrant(hash, nowS());
  if (!grantId) return;
  await store.revokeGrant(grantId, nowS());
  throw new OAuthGrantError(
    'invalid_grant',
    'The authorization code was already used; the tokens issued for it are revoked. Sign in again.',
  );
}

function checkResource(granted: string, asked: string | undefined): void {
  if (asked !== undefined && asked !== granted) {
    throw new OAuthGrantError('invalid_target', `This grant is for the resource ${granted}, not ${asked}.`);
  }
}

/** The scopes a request may be granted: the one MCP scope (asked for or implied). */
export function grantableScopes(asked: readonly string[] | undefined): string[] {
  const scopes = asked && asked.length > 0 ? [...new Set(asked)] : [MCP_SCOPE];
  const unknown = scopes.filter((s) => s !== MCP_SCOPE);
  if (unknown.length > 0) throw new OAuthGrantError('invalid_scope', `Unknown scope: ${unknown.join(' ')}.`);
  return scopes;
}
