/**
 * Who is calling `/mcp`, and whether the request may reach the MCP server at all.
 *
 * Our own middleware rather than the SDK's `requireBearerAuth`, which has no anonymous access, no 503 and demands
 * token expiry. The rules (docs/mcp-clients.md, "Credentials"):
 * - `Bearer prism` (the spec's anonymous sentinel) and `Bearer ` with nothing after it are anonymous;
 * - no Authorization header at all is a 401 challenge while OAuth is on (`PRISM_MCP_OAUTH`), because MCP clients
 *   start OAuth only after a 401; with OAuth off, or `PRISM_MCP_HEADERLESS=anonymous`, it is anonymous;
 * - an OAuth access token (`mcp_at_…`) is its user when it is live and was issued for this `/mcp`; otherwise 401;
 * - an API key is its user; an unknown key is 401 (never anonymous);
 * - a key store that cannot answer is 503 with `Retry-After` and no challenge, so clients retry instead of
 *   dropping a good key into an OAuth flow.
 * Every 401 carries `WWW-Authenticate: Bearer …` with `resource_metadata` when OAuth is on, and a JSON-RPC error
 * body whose message a person can read.
 */
import type { Request, RequestHandler } from 'express';
import { AppError, InvalidApiKeyError } from '../../domain/errors';
import { ACCESS_TOKEN_PREFIX, MCP_SCOPE, REFRESH_TOKEN_PREFIX } from '../../domain/oauth';
import type { Logger } from '../../lib/logger';
import { parseCredential, type AuthService } from '../../services/auth.service';
import type { McpOAuthService } from '../../services/mcp-oauth.service';
import { sendJsonRpcError } from '../mcp-errors';
import { oauthOriginOf, resourceMetadataUrlOf, resourceUrlOf } from './oauth-server';

export interface McpAuthOptions {
  auth: AuthService;
  /** Null when OAuth is off: no challenge for a missing header, no tokens. */
  oauth: McpOAuthService | null;
  /** What a request without an Authorization header is while OAuth is on. */
  headerless: 'challenge' | 'anonymous';
  publicUrl: string | undefined;
  allowedHosts: readonly string[];
  logger: Logger;
}

const MISSING =
  'Authentication required: sign in with OAuth (your MCP client offers it), or send "Authorization: Bearer ' +
  '<Prism API key>", or "Authorization: Bearer prism" to use the anonymous tools.';
const EXPIRED = 'The access token is invalid, expired or revoked: sign in again (your MCP client refreshes or asks).';

/** Sets `req.principal` for `/mcp` (the gateway surface: anonymous stays anonymous, as the spec's tool server). */
export function mcpAuth(options: McpAuthOptions): RequestHandler {
  const { auth, oauth, logger } = options;
  return (req, res, next) => {
    const header = req.get('authorization');
    const origin = oauth ? oauthOriginOf(req, options) : null;
    const refuse = (error: AppError, challenge: string | null): void => {
      const parts = [challenge, origin ? `resource_metadata="${resourceMetadataUrlOf(origin)}"` : null];
      if (origin) parts.push(`scope="${MCP_SCOPE}"`);
      const params = parts.filter((p): p is string => p !== null).join(', ');
      res.setHeader('WWW-Authenticate', `Bearer realm="prism"${params ? `, ${params}` : ''}`);
      sendJsonRpcError(res, error, req.requestId, logger);
    };
    // Where OAuth cannot be offered (plain http on a LAN address, no PRISM_PUBLIC_URL), no header stays anonymous.
    if (header === undefined && origin !== null && options.headerless === 'challenge') {
      return refuse(
        new AppError(401, { message: MISSING, type: 'authentication_error', code: 'missing_api_key' }),
        null,
      );
    }
    const credential = parseCredential(header);
    if (oauth && credential !== null && isOAuthToken(credential)) {
      void oauth
        .verifyAccessToken(credential)
        .then((verified) => {
          if (!verified || origin === null || verified.resource !== resourceUrlOf(origin)) {
            return refuse(invalidToken(), `error="invalid_token", error_description="${EXPIRED}"`);
          }
          req.principal = verified.principal;
          next();
        })
        .catch((error: unknown) => sendJsonRpcError(res, error, req.requestId, logger));
      return;
    }
    auth
      .authenticate(header, { clientIp: clientIpOf(req), surface: 'gateway' })
      .then((principal) => {
        req.principal = principal;
        next();
      })
      .catch((error: unknown) => {
        if (error instanceof InvalidApiKeyError) {
          return refuse(error, 'error="invalid_token", error_description="Invalid API Key"');
        }
        sendJsonRpcError(res, error, req.requestId, logger);
      });
  };
}

const isOAuthToken = (credential: string): boolean =>
  credential.startsWith(ACCESS_TOKEN_PREFIX) || credential.startsWith(REFRESH_TOKEN_PREFIX);

const clientIpOf = (req: Request): string => req.ip ?? req.socket.remoteAddress ?? 'unknown';

function invalidToken(): AppError {
  return new AppError(401, { message: EXPIRED, type: 'authentication_error', code: 'invalid_token' });
}
