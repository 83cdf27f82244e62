/**
 * The OAuth 2.1 client steps Prism takes to sign in to someone else's MCP server (services/agent-mcp/
 * oauth-sign-in.ts keeps the grant): protected-resource and authorization-server discovery, dynamic client
 * registration, the PKCE authorization URL, the code exchange and the refresh, each the MCP SDK's own helper.
 *
 * None uses the SDK's network code: every request goes through the SSRF-safe fetcher (safe-fetch.ts), so metadata
 * that names an authorization server on a private address is refused like the server's own URL, and each answer is
 * bounded in time and bytes. GETs follow (re-checked) redirects; POSTs do not. An OAuth error answer of the
 * authorization server (invalid_grant, …) is an {@link OAuthRefusedError}; anything else is a failure to reach it.
 */
import {
  discoverOAuthServerInfo,
  exchangeAuthorization,
  refreshAuthorization,
  registerClient,
  startAuthorization,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { checkResourceAllowed } from '@modelcontextprotocol/sdk/shared/auth-utils.js';
import type {
  AuthorizationServerMetadata,
  OAuthClientInformationMixed,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { safeFetch } from './safe-fetch';

export type { AuthorizationServerMetadata, OAuthClientInformationMixed, OAuthTokens };

/** An OAuth document or token answer is small; anything larger is refused. */
export const MAX_OAUTH_ANSWER_BYTES = 256 * 1024;

export interface OAuthFetchSettings {
  allowPrivate: boolean;
  /** For each request. */
  timeoutMs: number;
}

/** The authorization server answered with an OAuth error (`code`: invalid_grant, invalid_client, …). */
export class OAuthRefusedError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'OAuthRefusedError';
  }
}

/** Where a server's authorization happens, as its metadata says. */
export interface OAuthServerSetup {
  authorizationServerUrl: string;
  metadata: AuthorizationServerMetadata | null;
  /** The RFC 8707 resource tokens are asked for (the protected-resource metadata's), if it names one. */
  resource: string | null;
  /** The scopes to ask for, if the metadata lists any. */
  scope: string | null;
}

export function createRemoteMcpOAuthClient(settings: OAuthFetchSettings) {
  const fetchFn = oauthFetch(settings);
  const refusals = async <T>(step: () => Promise<T>): Promise<T> => {
    try {
      return await step();
    } catch (error) {
      if (error instanceof OAuthError) throw new OAuthRefusedError(error.errorCode, error.message);
      throw error;
    }
  };
  return {
    /** RFC 9728 then RFC 8414 (or OpenID) discovery from the MCP server's URL. */
    async discover(serverUrl: string): Promise<OAuthServerSetup> {
      const info = await refusals(() => discoverOAuthServerInfo(serverUrl, { fetchFn }));
      const metadata = info.authorizationServerMetadata ?? null;
      const resource = info.resourceMetadata?.resource ?? null;
      if (resource !== null && !checkResourceAllowed({ requestedResource: serverUrl, configuredResource: resource })) {
        throw new Error(`its metadata names the resource ${resource}, not ${serverUrl}`);
      }
      const scopes = info.resourceMetadata?.scopes_supported ?? metadata?.scopes_supported ?? [];
      return {
        authorizationServerUrl: info.authorizationServerUrl,
        metadata,
        resource,
        scope: scopes.length > 0 ? scopes.join(' ') : null,
      };
    },

    /** RFC 7591 dynamic registration as a public client (no secret) with one redirect URI. */
    async register(setup: OAuthServerSetup, clientName: string, redirectUri: string) {
      if (!setup.metadata?.registration_endpoint) {
        throw new Error(
          'its authorization server offers no dynamic client registration (register the server with the ' +
            'client its operator issued: auth.client_id, and auth.client_secret for a confidential client)',
        );
      }
      const metadata = setup.metadata;
      return refusals(() =>
        registerClient(setup.authorizationServerUrl, {
          metadata,
          clientMetadata: {
            client_name: clientName,
            redirect_uris: [redirectUri],
            grant_types: ['authorization_code', 'refresh_token'],
            response_types: ['code'],
            token_endpoint_auth_method: 'none',
          },
          fetchFn,
        }),
      );
    },

    /** The URL a person opens (PKCE S256, `state`, the resource), and the verifier to keep for the exchange. */
    async authorizationUrl(
      setup: OAuthServerSetup,
      client: OAuthClientInformationMixed,
      redirectUri: string,
      state: string,
    ): Promise<{ url: string; codeVerifier: string }> {
      const { authorizationUrl, codeVerifier } = await startAuthorization(setup.authorizationServerUrl, {
        ...(setup.metadata ? { metadata: setup.metadata } : {}),
        clientInformation: client,
        redirectUrl: redirectUri,
        state,
        ...(setup.scope ? { scope: setup.scope } : {}),
        ...(setup.resource ? { resource: new URL(setup.resource) } : {}),
      });
      return { url: authorizationUrl.href, codeVerifier };
    },

    async exchange(
      setup: OAuthServerSetup,
      client: OAuthClientInformationMixed,
      code: string,
      codeVerifier: string,
      redirectUri: string,
    ): Promise<OAuthTokens> {
      return refusals(() =>
        exchangeAuthorization(setup.authorizationServerUrl, {
          ...(setup.metadata ? { metadata: setup.metadata } : {}),
          clientInformation: client,
          authorizationCode: code,
          codeVerifier,
          redirectUri,
          ...(setup.resource ? { resource: new URL(setup.resource) } : {}),
          fetchFn,
        }),
      );
    },

    /** New tokens for a refresh token (the old refresh token is kept when the server sends none). */
    async refresh(setup: OAuthServerSetup, client: OAuthClientInformationMixed, refreshToken: string) {
      return refusals(() =>
        refreshAuthorization(setup.authorizationServerUrl, {
          ...(setup.metadata ? { metadata: setup.metadata } : {}),
          clientInformation: client,
          refreshToken,
          ...(setup.resource ? { resource: new URL(setup.resource) } : {}),
          fetchFn,
        }),
      );
    },
  };
}

export type RemoteMcpOAuthClient = ReturnType<typeof createRemoteMcpOAuthClient>;

/** The SDK helpers' fetch, on the SSRF-safe fetcher. */
function oauthFetch(settings: OAuthFetchSettings): FetchLike {
  return async (url, init) => {
    const method = (init?.method ?? 'GET').toUpperCase() === 'POST' ? 'POST' : 'GET';
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const body = init?.body;
    const text = typeof body === 'string' ? body : body instanceof URLSearchParams ? body.toString() : '';
    const fetched = await safeFetch(String(url), {
      allowPrivate: settings.allowPrivate,
      maxBytes: MAX_OAUTH_ANSWER_BYTES,
      timeoutMs: settings.timeoutMs,
      method,
      headers,
      ...(method === 'POST' ? { body: text } : {}),
      followRedirects: method === 'GET',
    });
    const answerHeaders = new Headers();
    for (const [name, value] of Object.entries(fetched.headers)) {
      if (name !== 'content-length' && name !== 'transfer-encoding') answerHeaders.set(name, value);
    }
    const empty = fetched.status === 204 || fetched.status === 304 || fetched.body.length === 0;
    return new Response(empty ? null : new Uint8Array(fetched.body), {
      status: fetched.status,
      headers: answerHeaders,
    });
  };
}
