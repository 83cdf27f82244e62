/**
 * The fetch the MCP SDK's OAuth helpers (discovery, client registration, token exchange and refresh) are given for
 * a remote MCP server's sign-in: every request goes through the SSRF-safe fetcher (lib/safe-fetch.ts), so a
 * metadata document that names an authorization server on a private address is refused like the server's own URL,
 * and each answer is bounded in time and bytes. GETs follow (re-checked) redirects; POSTs do not.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { safeFetch } from '../../lib/safe-fetch';

/** An OAuth document or token answer is small; anything larger is refused. */
export const MAX_OAUTH_ANSWER_BYTES = 256 * 1024;

export interface OAuthFetchSettings {
  allowPrivate: boolean;
  /** For each request. */
  timeoutMs: number;
}

export function oauthFetch(settings: OAuthFetchSettings): FetchLike {
  return async (url, init) => {
    const method = (init?.method ?? 'GET').toUpperCase() === 'POST' ? 'POST' : 'GET';
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const body = init?.body;
    const fetched = await safeFetch(String(url), {
      allowPrivate: settings.allowPrivate,
      maxBytes: MAX_OAUTH_ANSWER_BYTES,
      timeoutMs: settings.timeoutMs,
      method,
      headers,
      ...(method === 'POST' ? { body: typeof body === 'string' ? body : body ? String(body) : '' } : {}),
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
