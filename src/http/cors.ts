/**
 * CORS for browser callers from the origins an operator allows (PRISM_CORS_ORIGINS): allowed origins get the
 * `Access-Control-*` headers on every answer, and their preflights are answered here, before authentication and
 * the rate limits, so a preflight never costs a caller a request of its budget. Other origins get no CORS headers
 * (the browser then refuses to hand the answer to the page); requests without an Origin are not affected.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';
const EXPOSED = [
  'x-request-id',
  'retry-after',
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
].join(', ');

/** Returns a listener step: true when it answered the request (a preflight), false to go on. */
export function createCors(origins: readonly string[]): (req: IncomingMessage, res: ServerResponse) => boolean {
  const any = origins.includes('*');
  const allowed = new Set(origins);
  return (req, res) => {
    const origin = req.headers.origin;
    if (origins.length === 0 || origin === undefined) return false;
    res.setHeader('vary', 'Origin');
    if (!any && !allowed.has(origin)) return false;
    res.setHeader('access-control-allow-origin', any ? '*' : origin);
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    if (!preflight) {
      res.setHeader('access-control-expose-headers', EXPOSED);
      return false;
    }
    res.setHeader('vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers');
    res.setHeader('access-control-allow-methods', ALLOWED_METHODS);
    const asked = req.headers['access-control-request-headers'];
    res.setHeader('access-control-allow-headers', asked ?? 'authorization, content-type, x-request-id');
    res.setHeader('access-control-max-age', '600');
    res.statusCode = 204;
    res.end();
    return true;
  };
}
