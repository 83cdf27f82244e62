/**
 * Who is calling `/mcp`, and whether the request may reach the MCP server at all.
 *
 * Our own middleware rather than the SDK's `requireBearerAuth`, which has no anonymous access, no 503 and demands
 * token expiry (reference/mcp-and-agents.md §1.5). The rules: no header, `Bearer ` empty or `Bearer prism` is
 * anonymous; a known key is that user; an unknown key is 401 with a `WWW-Authenticate` challenge (clients then ask
 * for a new credential); a key store that cannot answer is 503 with `Retry-After` and no challenge, so clients retry
 * instead of dropping a good key into an OAuth flow.
 */
import type { RequestHandler } from 'express';
import { InvalidApiKeyError } from '../domain/errors';
import type { Logger } from '../lib/logger';
import type { AuthService } from '../services/auth.service';
import { sendJsonRpcError } from './mcp-errors';

const CHALLENGE = 'Bearer realm="prism", error="invalid_token", error_description="Invalid API Key"';

/** Sets `req.principal` for `/mcp` (the gateway surface: anonymous stays anonymous, as the spec's tool server). */
export function mcpAuth(auth: AuthService, logger: Logger): RequestHandler {
  return (req, res, next) => {
    auth
      .authenticate(req.get('authorization'), {
        clientIp: req.ip ?? req.socket.remoteAddress ?? 'unknown',
        surface: 'gateway',
      })
      .then((principal) => {
        req.principal = principal;
        next();
      })
      .catch((error: unknown) => {
        if (error instanceof InvalidApiKeyError) res.setHeader('WWW-Authenticate', CHALLENGE);
        sendJsonRpcError(res, error, req.requestId, logger);
      });
  };
}
