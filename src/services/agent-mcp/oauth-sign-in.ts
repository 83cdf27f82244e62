/**
 * OAuth sign-in to a remote MCP server, with Prism as the OAuth 2.1 client (docs/agents.md, "Signing in with
 * OAuth"): a person opens the authorization URL `start` returns, consents on the server's own page, and the
 * callback's code is exchanged for tokens that agents' calls then carry; the access token is refreshed when it is
 * about to expire or the server answers 401, and a refused refresh marks the server as needing a new sign-in.
 *
 * The protocol steps are the MCP SDK's own helpers (protected-resource and authorization-server discovery, dynamic
 * client registration, PKCE, code exchange, refresh), run by lib/remote-mcp-oauth.ts over the SSRF-safe fetcher.
 * A server registered with a pre-registered client (the client id its operator issued, and a secret for a
 * confidential client) signs in as that client instead of registering one. The grant (client, tokens, PKCE
 * verifier) is sealed with PRISM_SECRETS_KEY like an API key; the pending sign-in's `state` is stored only as a
 * hash, taken once, and expires.
 *
 * One refresh at a time per grant, across replicas: an authorization server that rotates refresh tokens takes a
 * refresh token spent twice as stolen and revokes the grant. The refreshing replica holds a lease on the server's
 * row (a compare-and-swap in the store); another that needs a token meanwhile waits and reads the new one.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError, BadRequestError } from '../../domain/errors';
import type { McpServerRecord } from '../../domain/mcp-server';
import type { Logger } from '../../lib/logger';
import {
  createRemoteMcpOAuthClient,
  OAuthRefusedError,
  type OAuthClientInformationMixed,
  type OAuthServerSetup,
  type OAuthTokens,
  type RemoteMcpOAuthClient,
} from '../../lib/remote-mcp-oauth';
import { SafeFetchError } from '../../lib/safe-fetch';
import type { SecretBox } from '../../lib/secret-box';
import type { McpServerStore } from '../../stores/types/mcp-server';

/** What Prism keeps of one server's sign-in, sealed (never returned). */
export interface OAuthGrant {
  /** The authorization server, its metadata, the resource and scopes asked for. */
  setup: OAuthServerSetup;
  client: OAuthClientInformationMixed;
  redirectUri: string;
  /** The PKCE verifier of the sign-in in progress; null once exchanged. */
  codeVerifier: string | null;
  tokens: OAuthTokens | null;
  /** When the access token expires (epoch ms); null when the server did not say. */
  expiresAt: number | null;
}

/** How long a person has between `start` and the callback. */
export const SIGN_IN_TTL_MS = 10 * 60_000;
/** A token is refreshed this long before it expires (a quarter of its life for short-lived ones). */
const REFRESH_MARGIN_MS = 30_000;
/** How often a replica waiting for another's refresh reads the row again. */
const REFRESH_POLL_MS = 50;

/** The sealing context of a server's pre-registered client secret (apart from its grant's). */
export const oauthClientContext = (serverId: string): string => `${serverId}#oauth-client`;

export interface McpOAuthDeps {
  store: McpServerStore;
  secrets: SecretBox;
  settings: { allowPrivate: boolean; timeoutMs: number };
  logger: Logger;
  now?: () => Date;
}

export interface McpOAuth {
  /** Discovers the server's authorization server, registers Prism as a client if needed, and opens a sign-in. */
  start(server: McpServerRecord, redirectUri: string): Promise<{ authorizationUrl: string }>;
  /**
   * Finishes the sign-in `state` names (taken once; expired or replayed: 400 `oauth_state_invalid`).
   * @returns the signed-in server.
   */
  finish(query: { state: string; code: string | null; error: string | null }): Promise<McpServerRecord>;
  /**
   * An access token for a call; refreshed first when it is about to expire, or when `rejected` (the server answered
   * 401 to it). A refused refresh marks the server `needs_sign_in`.
   * @throws 409 `mcp_server_sign_in_required` when a person must sign in (again).
   */
  accessToken(server: McpServerRecord, rejected?: string): Promise<string>;
}

export function createMcpOAuth(deps: McpOAuthDeps): McpOAuth {
  const now = deps.now ?? (() => new Date());
  const client = createRemoteMcpOAuthClient(deps.settings);
  const grants = grantBox(deps);
  const refresher = createGrantRefresher(deps, client, now);
  /** One refresh at a time per server on this replica (the store's lease keeps it to one across replicas). */
  const refreshing = new Map<string, Promise<string>>();

  return {
    async start(server, redirectUri) {
      const previous = grants.open(server);
      const state = randomBytes(32).toString('base64url');
      let grant: OAuthGrant;
      let authorizationUrl: string;
      try {
        const setup = await client.discover(server.url);
        const registered = await clientFor(deps.secrets, client, server, setup, previous, redirectUri);
        const { url, codeVerifier } = await client.authorizationUrl(setup, registered, redirectUri, state);
        authorizationUrl = url;
        grant = {
          setup,
          client: registered,
          redirectUri,
          codeVerifier,
          // A new sign-in keeps the tokens it replaces until it succeeds.
          tokens: previous?.tokens ?? null,
          expiresAt: previous?.expiresAt ?? null,
        };
      } catch (error) {
        throw signInFailed(server, error);
      }
      await deps.store.updateOAuth(server.orgId, server.id, {
        secretSealed: grants.seal(server, grant),
        oauthStatus: grant.tokens ? (server.oauthStatus ?? 'pending') : 'pending',
        oauthStateHash: hashState(state),
        oauthStateExpiresAt: new Date(now().getTime() + SIGN_IN_TTL_MS),
      });
      return { authorizationUrl };
    },

    async finish(query) {
      const server = await deps.store.takeOAuthState(hashState(query.state), now());
      if (!server) {
        throw new BadRequestError(
          'This sign-in link is unknown, was already used or has expired: start the sign-in again ' +
            '(POST /v1/agent/mcp-servers/{id}/oauth/start).',
          'oauth_state_invalid',
          'state',
        );
      }
      const grant = grants.open(server);
      if (!grant?.codeVerifier) throw signInRequired(server, 'the sign-in was not started');
      if (query.error !== null || query.code === null) {
        throw new BadRequestError(
          `The sign-in to MCP server '${server.name}' did not complete: its authorization server answered ` +
            `${JSON.stringify((query.error ?? 'no code').slice(0, 100))}. Start it again to retry.`,
          'oauth_sign_in_denied',
        );
      }
      let tokens: OAuthTokens;
      try {
        tokens = await client.exchange(grant.setup, grant.client, query.code, grant.codeVerifier, grant.redirectUri);
      } catch (error) {
        throw signInFailed(server, error);
      }
      const signedIn: McpServerRecord = {
        ...server,
        oauthStatus: 'signed_in',
        secretSealed: grants.seal(server, {
          ...grant,
          codeVerifier: null,
          tokens,
          expiresAt: expiryOf(tokens, now()),
        }),
      };
      await deps.store.updateOAuth(server.orgId, server.id, {
        secretSealed: signedIn.secretSealed,
        oauthStatus: 'signed_in',
        oauthStateHash: null,
        oauthStateExpiresAt: null,
      });
      return signedIn;
    },

    async accessToken(server, rejected) {
      const grant = grants.open(server);
      if (!grant?.tokens || server.oauthStatus === 'needs_sign_in') {
        throw signInRequired(server, server.oauthStatus === 'needs_sign_in' ? 'its sign-in was lost' : undefined);
      }
      if (rejected === undefined && !expiringSoon(grant, now().getTime())) return grant.tokens.access_token;
      const running = refreshing.get(server.id);
      if (running) return running;
      const next = refresher.refresh(server, rejected).finally(() => refreshing.delete(server.id));
      refreshing.set(server.id, next);
      return next;
    },
  };
}

/** Seals and opens a server's grant (context: the server's id). */
function grantBox(deps: Pick<McpOAuthDeps, 'secrets'>) {
  return {
    seal: (server: McpServerRecord, grant: OAuthGrant): string => deps.secrets.seal(JSON.stringify(grant), server.id),
    open: (server: McpServerRecord): OAuthGrant | null =>
      server.secretSealed === null
        ? null
        : (JSON.parse(deps.secrets.open(server.secretSealed, server.id)) as OAuthGrant),
  };
}

/**
 * The client a sign-in uses: the pre-registered one the server was registered with, else the one Prism registered
 * before with the same authorization server and redirect URI, else a new dynamic registration.
 */
async function clientFor(
  secrets: SecretBox,
  client: RemoteMcpOAuthClient,
  server: McpServerRecord,
  setup: OAuthServerSetup,
  previous: OAuthGrant | null,
  redirectUri: string,
): Promise<OAuthClientInformationMixed> {
  if (server.oauthClientId !== null) {
    const secret =
      server.oauthClientSecretSealed === null
        ? null
        : secrets.open(server.oauthClientSecretSealed, oauthClientContext(server.id));
    return { client_id: server.oauthClientId, ...(secret === null ? {} : { client_secret: secret }) };
  }
  const sameClient =
    previous !== null &&
    previous.setup.authorizationServerUrl === setup.authorizationServerUrl &&
    previous.redirectUri === redirectUri;
  return sameClient ? previous.client : client.register(setup, `Prism agents (${server.name})`, redirectUri);
}

function expiryOf(tokens: OAuthTokens, at: Date): number | null {
  return typeof tokens.expires_in === 'number' ? at.getTime() + tokens.expires_in * 1000 : null;
}

/**
 * Refreshes grants one at a time across replicas: the replica that takes the store's lease on the row refreshes
 * and writes the new tokens as it gives the lease up; one that finds the lease taken reads the row until the new
 * token is there (or the lease has run out, when it tries to take it itself).
 */
function createGrantRefresher(deps: McpOAuthDeps, client: RemoteMcpOAuthClient, now: () => Date) {
  const grants = grantBox(deps);
  /** Longer than the refresh request may take (its timeout), with room for the writes around it. */
  const leaseMs = deps.settings.timeoutMs * 2 + 5_000;

  const markNeedsSignIn = async (
    server: McpServerRecord,
    grant: OAuthGrant,
    owner: string,
    reason: string,
  ): Promise<AppError> => {
    deps.logger.warn('a remote MCP server needs a new OAuth sign-in', { server: server.name, reason });
    await deps.store.finishRefresh(server.orgId, server.id, owner, {
      secretSealed: grants.seal(server, { ...grant, tokens: null, expiresAt: null }),
      oauthStatus: 'needs_sign_in',
      oauthStateHash: server.oauthStateHash,
      oauthStateExpiresAt: server.oauthStateExpiresAt,
    });
    return signInRequired(server, reason);
  };

  /** A token other than `rejected` that is not about to expire, if the record holds one. */
  const usableToken = (server: McpServerRecord, rejected: string | undefined): string | null => {
    const grant = grants.open(server);
    if (!grant?.tokens || server.oauthStatus === 'needs_sign_in') return null;
    const current = grant.tokens.access_token;
    return current !== rejected && !expiringSoon(grant, now().getTime()) ? current : null;
  };

  /** Refreshes with the lease held by `owner`. */
  const refreshHolding = async (server: McpServerRecord, rejected: string | undefined, owner: string) => {
    // Read again: another replica may have refreshed it since this record was read.
    const latest = (await deps.store.get(server.orgId, server.id)) ?? server;
    const fresh = usableToken(latest, rejected);
    if (fresh !== null) return fresh;
    const grant = grants.open(latest);
    if (!grant?.tokens || latest.oauthStatus === 'needs_sign_in') {
      throw signInRequired(latest, grant?.tokens ? 'its sign-in was lost' : 'no one has signed in yet');
    }
    if (!grant.tokens.refresh_token) throw await markNeedsSignIn(latest, grant, owner, 'the access token expired');
    let tokens: OAuthTokens;
    try {
      tokens = await client.refresh(grant.setup, grant.client, grant.tokens.refresh_token);
    } catch (error) {
      if (error instanceof OAuthRefusedError) {
        // The authorization server's words are cut short: they reach the planner and the run's record.
        const said = `${error.code.slice(0, 64)}: ${error.message.slice(0, 300)}`;
        throw await markNeedsSignIn(latest, grant, owner, `the refresh was refused (${said})`);
      }
      throw signInFailed(latest, error);
    }
    const update = {
      secretSealed: grants.seal(latest, { ...grant, tokens, expiresAt: expiryOf(tokens, now()) }),
      oauthStatus: 'signed_in' as const,
      oauthStateHash: latest.oauthStateHash,
      oauthStateExpiresAt: latest.oauthStateExpiresAt,
    };
    if (!(await deps.store.finishRefresh(latest.orgId, latest.id, owner, update))) {
      // The lease ran out during the refresh: these tokens are still the newest the server issued.
      deps.logger.warn('an OAuth refresh outlived its lease', { server: latest.name });
      await deps.store.updateOAuth(latest.orgId, latest.id, update);
    }
    return tokens.access_token;
  };

  return {
    async refresh(server: McpServerRecord, rejected: string | undefined): Promise<string> {
      const giveUpAt = now().getTime() + leaseMs * 2;
      for (;;) {
        const owner = randomUUID();
        const at = now();
        if (await deps.store.claimRefresh(server.orgId, server.id, owner, at, new Date(at.getTime() + leaseMs))) {
          try {
            return await refreshHolding(server, rejected, owner);
          } finally {
            await deps.store.finishRefresh(server.orgId, server.id, owner, null);
          }
        }
        // Another replica is refreshing: its token is read once it is written.
        await sleep(REFRESH_POLL_MS);
        const latest = await deps.store.get(server.orgId, server.id);
        if (!latest) throw signInRequired(server, 'it was removed');
        const fresh = usableToken(latest, rejected);
        if (fresh !== null) return fresh;
        if (latest.oauthStatus === 'needs_sign_in') throw signInRequired(latest, 'its sign-in was lost');
        if (now().getTime() > giveUpAt) {
          throw signInFailed(latest, new Error('another replica refreshing its token did not finish'));
        }
      }
    },
  };
}

function expiringSoon(grant: OAuthGrant, nowMs: number): boolean {
  if (grant.expiresAt === null) return false;
  const life = typeof grant.tokens?.expires_in === 'number' ? grant.tokens.expires_in * 1000 : REFRESH_MARGIN_MS * 4;
  return nowMs >= grant.expiresAt - Math.min(REFRESH_MARGIN_MS, life / 4);
}

function hashState(state: string): string {
  return createHash('sha256').update(state).digest('hex');
}

/** 409: a person must sign in (again) before agents can use the server. */
export function signInRequired(server: McpServerRecord, reason?: string): AppError {
  return new AppError(409, {
    message:
      `MCP server '${server.name}' needs a person to sign in${reason ? ` (${reason})` : ''}: ` +
      `POST /v1/agent/mcp-servers/${server.id}/oauth/start and open the authorization_url it returns.`,
    type: 'invalid_request_error',
    code: 'mcp_server_sign_in_required',
  });
}

function signInFailed(server: McpServerRecord, error: unknown): AppError {
  const reason =
    error instanceof OAuthRefusedError
      ? `${error.code.slice(0, 64)}: ${error.message.slice(0, 300)}`
      : error instanceof SafeFetchError
        ? error.message
        : error instanceof Error
          ? (error.message.split('\n')[0] ?? 'failed').slice(0, 300)
          : 'failed';
  return new AppError(502, {
    message: `The OAuth sign-in to MCP server '${server.name}' failed: ${reason}`,
    type: 'upstream_error',
    code: 'oauth_sign_in_failed',
  });
}
