/**
 * Connects the official SDK's v2 client (`@modelcontextprotocol/client`) to a running test app's `/mcp`, in the
 * era asked for: `auto` probes with `server/discover` and falls back to the 2025 handshake (what a new user's
 * client does), `pin` demands 2026-07-28, `legacy` is the plain 2025 handshake of the same package. `fetch` lets a
 * test send each request where it likes (two replicas, alternately).
 */
import { Client, StreamableHTTPClientTransport, type FetchLike } from '@modelcontextprotocol/client';

export const MODERN = '2026-07-28';

export async function connectModern(
  baseUrl: string,
  authorization?: string,
  options: { toolsets?: string; mode?: 'auto' | 'pin' | 'legacy'; fetch?: FetchLike } = {},
): Promise<Client> {
  const mode = options.mode ?? 'auto';
  const client = new Client(
    { name: 'prism-test-v2', version: '1.0.0' },
    { versionNegotiation: { mode: mode === 'pin' ? { pin: MODERN } : mode } },
  );
  const headers: Record<string, string> = authorization === undefined ? {} : { Authorization: authorization };
  const url = new URL(`${baseUrl}/mcp`);
  if (options.toolsets !== undefined) url.searchParams.set('toolsets', options.toolsets);
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers },
      ...(options.fetch ? { fetch: options.fetch } : {}),
    }),
  );
  return client;
}
