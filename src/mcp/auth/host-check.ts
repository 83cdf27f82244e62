/**
 * DNS-rebinding guard for `/mcp`: the `Host` header, and the `Origin` header when a browser sends one, must name an
 * allowed host. A web page that rebinds its own name to 127.0.0.1 then cannot drive a local Prism's tools.
 *
 * Ours rather than the SDK's `hostHeaderValidation`, because that one does not look at `Origin` and answers in its
 * own body shape; this one answers 403 as a JSON-RPC error like every other `/mcp` refusal.
 */
import type { RequestHandler } from 'express';
import { PermissionDeniedError } from '../../domain/errors';
import type { Logger } from '../../lib/logger';
import { sendJsonRpcError } from '../mcp-errors';

/** `allowed` holds lower-case host names (IPv6 in brackets); `*` allows every host. */
export function mcpHostCheck(allowed: readonly string[], logger: Logger): RequestHandler {
  const any = allowed.includes('*');
  const names = new Set(allowed);
  return (req, res, next) => {
    if (any) return next();
    const host = hostnameOf(req.headers.host);
    const origin = req.headers.origin;
    const originHost = origin === undefined || origin === 'null' ? null : hostnameOf(origin, true);
    if (host !== null && names.has(host) && (origin === undefined || (originHost !== null && names.has(originHost)))) {
      return next();
    }
    const what = host === null || !names.has(host) ? 'Host' : 'Origin';
    sendJsonRpcError(
      res,
      new PermissionDeniedError(`${what} not allowed for /mcp (PRISM_MCP_ALLOWED_HOSTS).`),
      req.requestId,
      logger,
    );
  };
}

/** The lower-case host name of a `Host` value (`name:port`, `[::1]:port`) or of an origin URL; null if unreadable. */
function hostnameOf(value: string | undefined, isOrigin = false): string | null {
  if (!value) return null;
  try {
    return new URL(isOrigin ? value : `http://${value}`).hostname.toLowerCase();
  } catch {
    return null;
  }
}
