/**
 * A client configured with a wrong key still ends on Prism's consent page, and that page is the only place Prism
 * can say so. mcp-remote (and other clients built on the MCP SDK) answer any 401 by starting an OAuth sign-in and
 * print none of the challenge's `error_description`, so "Invalid API Key" never reaches their log; and because they
 * keep sending the configured header after the sign-in, approving cannot help. They do send that header with their
 * dynamic client registration, though: `/register` checks it here, the registration keeps the verdict, and the
 * consent page for that client says what was wrong and what to do.
 *
 * The verdict travels from the registration request to the store through an AsyncLocalStorage, because the SDK's
 * register handler hands the clients store nothing of the request.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Request } from 'express';
import { InvalidApiKeyError } from '../../domain/errors';
import { ACCESS_TOKEN_PREFIX, REFRESH_TOKEN_PREFIX } from '../../domain/oauth';
import { parseCredential, type AuthService } from '../../services/auth.service';
import type { McpOAuthService } from '../../services/mcp-oauth.service';

export type RefusedCredential = 'invalid_api_key' | 'invalid_token';

/** The field of a stored client registration that keeps the verdict (never sent back to the client). */
export const REFUSED_FIELD = 'prism_refused_credential';

/** The verdict on the registration request being handled, if its Authorization header was refused. */
export const registrationVerdict = new AsyncLocalStorage<RefusedCredential | null>();

/**
 * Whether the request's `Authorization` header is one `/mcp` would refuse with a 401: an API key that matches none,
 * or an OAuth token that is unknown, expired, revoked or for another resource. The anonymous sentinel, no header,
 * and a key store that cannot answer are not refusals.
 */
export async function refusedCredentialOf(
  req: Request,
  deps: { auth: AuthService; oauth: McpOAuthService; resource: string },
): Promise<RefusedCredential | null> {
  const header = req.get('authorization');
  const credential = parseCredential(header);
  if (credential === null) return null;
  if (credential.startsWith(ACCESS_TOKEN_PREFIX) || credential.startsWith(REFRESH_TOKEN_PREFIX)) {
    const verified = await deps.oauth.verifyAccessToken(credential).catch(() => undefined);
    if (verified === undefined) return null;
    return verified && verified.resource === deps.resource ? null : 'invalid_token';
  }
  try {
    await deps.auth.authenticate(header, { clientIp: req.ip ?? 'unknown', surface: 'gateway' });
    return null;
  } catch (error) {
    return error instanceof InvalidApiKeyError ? 'invalid_api_key' : null;
  }
}

/** What the consent page says about a client whose registration carried a refused credential. */
export function refusalNotice(refused: unknown): string | undefined {
  if (refused === 'invalid_api_key') {
    return (
      'Invalid API Key: the key in this client’s configuration matches no active Prism key. The client keeps ' +
      'sending it, so signing in here will not help: replace it with a valid key, or remove the Authorization ' +
      'header from the configuration and connect again to sign in.'
    );
  }
  if (refused === 'invalid_token') {
    return (
      'The access token in this client’s configuration is invalid, expired or revoked. The client keeps sending ' +
      'it, so signing in here will not help: remove the Authorization header from the configuration and connect ' +
      'again to sign in.'
    );
  }
  return undefined;
}
