/**
 * Signed, expiring URLs served by Prism itself (public file links, presigned uploads, skill downloads).
 *
 * The signature is an HMAC-SHA256 over the method, the path and the expiry, so a link works only for the one
 * action it was made for and only until it expires. The secret never leaves the server.
 */
import { hmacSha256Hex, safeEqualHex } from './hash';

export interface SignedQuery {
  expires: number;
  signature: string;
}

export interface UrlSigner {
  /** Signs `method path` until `expiresAt` (unix seconds). */
  sign(method: string, path: string, expiresAt: number): SignedQuery;
  /** True when the signature matches and `nowSeconds` is before the expiry. */
  verify(method: string, path: string, query: { expires?: unknown; signature?: unknown }, nowSeconds: number): boolean;
  /** `path?expires=…&signature=…` */
  signedPath(method: string, path: string, expiresAt: number): string;
}

export function createUrlSigner(secret: string): UrlSigner {
  const mac = (method: string, path: string, expires: number): string =>
    hmacSha256Hex(secret, `${method.toUpperCase()}\n${path}\n${expires}`);
  const sign = (method: string, path: string, expiresAt: number): SignedQuery => ({
    expires: Math.floor(expiresAt),
    signature: mac(method, path, Math.floor(expiresAt)),
  });
  return {
    sign,
    verify(method, path, query, nowSeconds) {
      const expires = Number(query.expires);
      if (!Number.isInteger(expires) || typeof query.signature !== 'string') return false;
      if (nowSeconds >= expires) return false;
      return safeEqualHex(mac(method, path, expires), query.signature);
    },
    signedPath(method, path, expiresAt) {
      const { expires, signature } = sign(method, path, expiresAt);
      return `${path}?expires=${expires}&signature=${signature}`;
    },
  };
}
