/**
 * OAuth Client ID Metadata Documents (CIMD, draft-ietf-oauth-client-id-metadata-document; the MCP spec's way for a
 * client to sign in without registering, which 2026-07-28 prefers over dynamic registration). A client whose
 * `client_id` is an https URL is the JSON document at that URL: Prism fetches it through the same SSRF-safe fetcher
 * as every other URL (public addresses only unless PRISM_ALLOW_PRIVATE_URLS, a size cap, a time limit), checks it
 * (its `client_id` is that URL, it has `redirect_uris`, it is a public client), and trusts it for ten minutes
 * before fetching it again (a bounded cache per process). The first fetch also records the client in the OAuth
 * client store, which the grants refer to. The consent page names the client as the document does. Dynamic
 * registration stays for 2025 clients.
 *
 * Plain http URLs are accepted only where private addresses are (a development set-up); production clients use
 * https, as the draft requires.
 */
import { SafeFetchError, safeFetch } from '../../lib/safe-fetch';

/** Largest document read (the draft suggests servers cap it; real ones are well under 2 KB). */
export const MAX_DOCUMENT_BYTES = 5 * 1024;
const FETCH_TIMEOUT_MS = 5000;
/** How long a fetched document is trusted before it is fetched again. */
export const DOCUMENT_TTL_S = 600;
/** Documents kept in memory at most. */
const MAX_CACHED = 256;

/** Why a client id URL cannot be used: the text of the `invalid_client` answer. */
export class ClientMetadataError extends Error {}

/** Whether `clientId` is a URL client id (an http(s) URL with a path), as opposed to a registered one. */
export function isUrlClientId(clientId: string): boolean {
  return /^https?:\/\/[^/]+\/.+/i.test(clientId);
}

/**
 * The client the document at `clientId` describes, ready for the client store.
 * @throws ClientMetadataError saying what is wrong (unreachable, not JSON, mismatched id, a secret, …).
 */
export async function fetchClientMetadata(
  clientId: string,
  policy: { allowPrivate: boolean },
): Promise<Record<string, unknown>> {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new ClientMetadataError('The client_id is not a URL.');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowPrivate)) {
    throw new ClientMetadataError('A URL client_id must be an https URL.');
  }
  if (url.hash || url.username || url.password || url.pathname === '/') {
    throw new ClientMetadataError('A URL client_id must have a path and no fragment or credentials.');
  }
  let body: Buffer;
  try {
    const fetched = await safeFetch(clientId, {
      allowPrivate: policy.allowPrivate,
      maxBytes: MAX_DOCUMENT_BYTES,
      timeoutMs: FETCH_TIMEOUT_MS,
      headers: { accept: 'application/json' },
      // The document must be at the id itself: a redirect would make another URL speak for it.
      followRedirects: false,
    });
    if (fetched.status !== 200) {
      throw new ClientMetadataError(`The client metadata document answered ${fetched.status}.`);
    }
    body = fetched.body;
  } catch (error) {
    if (error instanceof ClientMetadataError) throw error;
    const reason = error instanceof SafeFetchError ? error.message : 'it could not be fetched';
    throw new ClientMetadataError(`The client metadata document could not be read: ${reason}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch {
    throw new ClientMetadataError('The client metadata document is not JSON.');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new ClientMetadataError('The client metadata document is not a JSON object.');
  }
  const fields = doc as Record<string, unknown>;
  if (fields.client_id !== clientId) {
    throw new ClientMetadataError('The client metadata document names another client_id than its own URL.');
  }
  if ('client_secret' in fields || 'client_secret_expires_at' in fields) {
    throw new ClientMetadataError('A client metadata document must not carry a client secret.');
  }
  const auth = fields.token_endpoint_auth_method ?? 'none';
  if (auth !== 'none') {
    throw new ClientMetadataError('Prism accepts public clients only (token_endpoint_auth_method none).');
  }
  const redirects = fields.redirect_uris;
  if (!Array.isArray(redirects) || redirects.length === 0 || !redirects.every((u) => typeof u === 'string')) {
    throw new ClientMetadataError('The client metadata document has no redirect_uris.');
  }
  const name = typeof fields.client_name === 'string' ? fields.client_name.slice(0, 200) : undefined;
  return {
    client_id: clientId,
    redirect_uris: redirects,
    ...(name ? { client_name: name } : {}),
    ...(typeof fields.client_uri === 'string' ? { client_uri: fields.client_uri } : {}),
    grant_types: Array.isArray(fields.grant_types) ? fields.grant_types : ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...(typeof fields.scope === 'string' ? { scope: fields.scope } : {}),
  };
}

/** URL clients by id, each fetched at most once per DOCUMENT_TTL_S (failures are not kept: the next try refetches). */
export function createClientMetadataCache(
  policy: { allowPrivate: boolean },
  now: () => number = () => Math.floor(Date.now() / 1000),
): { get(clientId: string): Promise<Record<string, unknown>> } {
  const cached = new Map<string, { client: Record<string, unknown>; fetchedAt: number }>();
  return {
    async get(clientId) {
      const hit = cached.get(clientId);
      if (hit && now() - hit.fetchedAt < DOCUMENT_TTL_S) return hit.client;
      const client = await fetchClientMetadata(clientId, policy);
      cached.delete(clientId);
      if (cached.size >= MAX_CACHED) cached.delete(cached.keys().next().value as string);
      cached.set(clientId, { client, fetchedAt: now() });
      return client;
    },
  };
}
