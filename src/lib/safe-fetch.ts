/**
 * Fetches URLs on a caller's behalf without letting the caller reach inside our network (SSRF).
 *
 * Every hop is checked: only http(s); the host is resolved once and every address it resolves to must be public
 * (loopback, private, link-local, CGNAT, multicast and the like are refused unless `allowPrivate`); the socket
 * connects to the very address that was checked (no second DNS lookup, so DNS rebinding cannot swap it);
 * redirects are followed by hand, each re-checked; the body is capped in size and the whole fetch in time.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

export interface SafeFetchOptions {
  allowPrivate: boolean;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects?: number;
  method?: 'GET' | 'POST' | 'DELETE';
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** POSTs (webhooks) do not follow redirects; GETs do. */
  followRedirects?: boolean;
}

export interface FetchedResource {
  status: number;
  contentType: string | null;
  body: Buffer;
  finalUrl: string;
  /** The final response's headers (lower-case names; repeated ones joined with ', '). */
  headers: Record<string, string>;
}

/** Why a fetch was refused or failed; `kind` lets callers map it to their own error codes. */
export class SafeFetchError extends Error {
  constructor(
    readonly kind: 'not_allowed' | 'failed' | 'too_large' | 'timeout',
    message: string,
  ) {
    super(message);
    this.name = 'SafeFetchError';
  }
}

const blocked = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 128],
  ['::1', 128],
  ['::', 96], // IPv4-compatible (deprecated): ::7f00:1 is 127.0.0.1
  ['100::', 64], // discard-only
  ['fec0::', 10], // site-local (deprecated, still routed inside some networks)
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['64:ff9b::', 96],
] as const) {
  blocked.addSubnet(prefix, bits, 'ipv6');
}

/**
 * True for addresses a server must not be tricked into calling. IPv4-mapped (`::ffff:0:0/96`) and IPv4-translated
 * (`::ffff:0:0:0/96`) IPv6 addresses are checked as the IPv4 address they carry, in every spelling
 * (`::ffff:127.0.0.1`, `::ffff:7f00:1`, `0:0:0:0:0:ffff:7f00:0001`); IPv4-compatible ones (`::/96`) are refused.
 */
export function isPrivateAddress(address: string): boolean {
  const embedded = embeddedIpv4(address);
  if (embedded) return blocked.check(embedded, 'ipv4');
  const family = net.isIPv4(address) ? 'ipv4' : net.isIPv6(address) ? 'ipv6' : null;
  if (!family) return true;
  return blocked.check(address, family);
}

/** The IPv4 address inside an IPv4-mapped or -translated IPv6 address, whatever its spelling; else null. */
function embeddedIpv4(address: string): string | null {
  if (!net.isIPv6(address)) return null;
  let canonical: string;
  try {
    canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1).toLowerCase();
  } catch {
    return null;
  }
  const hex = /^::ffff:(?:0:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (!hex?.[1] || !hex[2]) return null;
  const high = parseInt(hex[1], 16);
  const low = parseInt(hex[2], 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/** Parses and checks the scheme; throws `not_allowed` for anything but http(s) URLs. */
export function parsePublicUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SafeFetchError('not_allowed', 'not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SafeFetchError('not_allowed', `only http and https URLs are fetched, not ${url.protocol}`);
  }
  if (url.username || url.password) throw new SafeFetchError('not_allowed', 'URLs with credentials are refused');
  return url;
}

async function resolveChecked(hostname: string, allowPrivate: boolean): Promise<{ address: string; family: number }> {
  const host = hostname.replace(/^\[|\]$/g, '');
  const addresses = net.isIP(host)
    ? [{ address: host, family: net.isIPv6(host) ? 6 : 4 }]
    : await dns.promises.lookup(host, { all: true, verbatim: true }).catch(() => {
        throw new SafeFetchError('failed', `could not resolve host ${host}`);
      });
  const first = addresses[0];
  if (!first) throw new SafeFetchError('failed', `could not resolve host ${host}`);
  if (!allowPrivate && addresses.some((a) => isPrivateAddress(a.address))) {
    throw new SafeFetchError(
      'not_allowed',
      `host ${host} resolves to a private, loopback or link-local address; a deployment that should fetch such ` +
        'addresses sets PRISM_ALLOW_PRIVATE_URLS=1',
    );
  }
  return first;
}

/**
 * Checks a URL the server will call later (a webhook) as the fetcher will: http(s), no credentials, and a host that
 * resolves to no private, loopback or link-local address unless `allowPrivate`.
 * @throws SafeFetchError `not_allowed` (or `failed` when the host does not resolve).
 */
export async function checkPublicUrl(rawUrl: string, allowPrivate: boolean): Promise<URL> {
  const url = parsePublicUrl(rawUrl);
  await resolveChecked(url.hostname, allowPrivate);
  return url;
}

/** Fetches `rawUrl` under the rules above. Non-2xx statuses are returned, not thrown. */
export async function safeFetch(rawUrl: string, options: SafeFetchOptions): Promise<FetchedResource> {
  const deadline = Date.now() + options.timeoutMs;
  const maxRedirects = options.followRedirects === false ? 0 : (options.maxRedirects ?? 5);
  let url = parsePublicUrl(rawUrl);
  for (let hop = 0; ; hop += 1) {
    const target = await resolveChecked(url.hostname, options.allowPrivate);
    const result = await requestOnce(url, target, options, deadline);
    if (result.redirect && options.followRedirects !== false) {
      if (hop >= maxRedirects) throw new SafeFetchError('failed', `more than ${maxRedirects} redirects`);
      url = parsePublicUrl(new URL(result.redirect, url).toString());
      continue;
    }
    return {
      status: result.status,
      contentType: result.contentType,
      body: result.body,
      finalUrl: url.toString(),
      headers: result.headers,
    };
  }
}

interface OnceResult {
  status: number;
  contentType: string | null;
  body: Buffer;
  redirect: string | null;
  headers: Record<string, string>;
}

function requestOnce(
  url: URL,
  target: { address: string; family: number },
  options: SafeFetchOptions,
  deadline: number,
): Promise<OnceResult> {
  const remaining = deadline - Date.now();
  if (remaining <= 0) return Promise.reject(new SafeFetchError('timeout', 'timed out'));
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<OnceResult>((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: options.method ?? 'GET',
        headers: { 'user-agent': 'prism/1 (+url-fetch)', ...options.headers },
        // Connect to the address we checked, whatever DNS says now.
        lookup: (_host, _opts, callback) => callback(null, target.address, target.family),
        timeout: remaining,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (status >= 300 && status < 400 && location) {
          res.resume();
          resolve({ status, contentType: null, body: Buffer.alloc(0), redirect: location, headers: {} });
          return;
        }
        const declared = Number(res.headers['content-length'] ?? NaN);
        if (Number.isFinite(declared) && declared > options.maxBytes) {
          res.destroy();
          reject(new SafeFetchError('too_large', `the resource is larger than ${options.maxBytes} bytes`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxBytes) {
            res.destroy();
            reject(new SafeFetchError('too_large', `the resource is larger than ${options.maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () =>
          resolve({
            status,
            contentType: res.headers['content-type'] ?? null,
            body: Buffer.concat(chunks),
            redirect: null,
            headers: headersOf(res.headers),
          }),
        );
        res.on('error', (error) => reject(new SafeFetchError('failed', error.message)));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      reject(new SafeFetchError('timeout', 'timed out'));
    }, remaining);
    req.on('close', () => clearTimeout(timer));
    req.on('timeout', () => {
      req.destroy();
      reject(new SafeFetchError('timeout', 'timed out'));
    });
    req.on('error', (error) => reject(new SafeFetchError('failed', error.message)));
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

function headersOf(raw: http.IncomingHttpHeaders): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}
