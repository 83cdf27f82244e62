/**
 * Talks to someone else's MCP server (Streamable HTTP) for Prism's agents, with the official SDK's `Client`, but
 * never through the SDK's own network code: every HTTP request goes through the SSRF-safe fetcher (safe-fetch.ts),
 * so a registered URL that resolves to a private address is refused at call time too (DNS can change after
 * registration), and every answer is capped in bytes and the whole exchange in time.
 *
 * Both MCP eras: the SDK's v2 client (`@modelcontextprotocol/client`) probes with `server/discover` and speaks
 * 2026-07-28 to a server that offers it (no session at all), else falls back to the 2025 handshake. Each use is
 * short either way (connect, the request, close): nothing is kept between calls, so a run resumed on another
 * replica or after a restart needs no connection state. The standalone GET stream is refused locally
 * (the SDK takes 405 as "the server offers none"); notifications a tool would send on it are not needed here.
 */
import { Client, SdkHttpError, StreamableHTTPClientTransport, type FetchLike } from '@modelcontextprotocol/client';
import { safeFetch, SafeFetchError } from './safe-fetch';
import { withTraceHeaders } from './tracing';

export interface RemoteMcpTarget {
  url: string;
  /** Sent on every request (the `Authorization` of an API key or an OAuth access token). */
  headers: Record<string, string>;
  allowPrivate: boolean;
  /** For the whole exchange: connect, the request, its answer. */
  timeoutMs: number;
  /** Per HTTP answer. */
  maxBytes: number;
}

export interface RemoteMcpTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface RemoteToolResult {
  isError: boolean;
  /** The text blocks joined (other blocks are named, not inlined), cut at `maxTextChars`. */
  text: string;
  structured: Record<string, unknown> | null;
  truncated: boolean;
}

/** Why talking to a remote server failed; `kind` says whether it was refused, too slow, too big or broken. */
export class RemoteMcpError extends Error {
  constructor(
    readonly kind: 'not_allowed' | 'timeout' | 'too_large' | 'failed' | 'unauthorized',
    message: string,
  ) {
    super(message);
    this.name = 'RemoteMcpError';
  }
}

/** At most this many tools are read from one server (pages of `tools/list` included). */
export const MAX_REMOTE_TOOLS = 100;
const MAX_LIST_PAGES = 10;

/** The server's tools (the first {@link MAX_REMOTE_TOOLS}). */
export async function listRemoteTools(target: RemoteMcpTarget): Promise<RemoteMcpTool[]> {
  return withSession(target, async (client, remaining) => {
    const tools: RemoteMcpTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES && tools.length < MAX_REMOTE_TOOLS; page += 1) {
      const listed = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: remaining() });
      for (const tool of listed.tools) {
        if (tools.length >= MAX_REMOTE_TOOLS) break;
        tools.push({
          name: tool.name,
          description: (tool.description ?? '').slice(0, 2000),
          inputSchema: tool.inputSchema,
        });
      }
      cursor = listed.nextCursor;
      if (!cursor) break;
    }
    return tools;
  });
}

/** Calls one tool; a tool that reports an error (`isError`) is a result, not a throw. */
export async function callRemoteTool(
  target: RemoteMcpTarget,
  name: string,
  args: Record<string, unknown>,
  maxTextChars: number,
): Promise<RemoteToolResult> {
  return withSession(target, async (client, remaining) => {
    const result = await client.callTool({ name, arguments: args }, { timeout: remaining() });
    const blocks = Array.isArray(result.content) ? (result.content as { type: string; text?: unknown }[]) : [];
    const text = blocks
      .map((block) => (block.type === 'text' && typeof block.text === 'string' ? block.text : `[${block.type}]`))
      .join('\n');
    const structured =
      result.structuredContent && typeof result.structuredContent === 'object'
        ? (result.structuredContent as Record<string, unknown>)
        : null;
    return {
      isError: result.isError === true,
      text: text.slice(0, maxTextChars),
      structured,
      truncated: text.length > maxTextChars,
    };
  });
}

async function withSession<T>(
  target: RemoteMcpTarget,
  work: (client: Client, remaining: () => number) => Promise<T>,
): Promise<T> {
  const deadline = Date.now() + target.timeoutMs;
  const remaining = (): number => Math.max(1, deadline - Date.now());
  const failures: SafeFetchError[] = [];
  const transport = new StreamableHTTPClientTransport(new URL(target.url), {
    fetch: boundedFetch(target, deadline, failures),
  });
  const client = new Client({ name: 'prism-agent', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new RemoteMcpError('timeout', `no answer within ${target.timeoutMs} ms`)),
      target.timeoutMs,
    );
  });
  try {
    return await Promise.race([
      (async () => {
        await client.connect(transport, { timeout: remaining() });
        return work(client, remaining);
      })(),
      expired,
    ]);
  } catch (error) {
    throw remoteError(error, failures[0]);
  } finally {
    clearTimeout(timer);
    void client.close().catch(() => undefined);
  }
}

/** The SDK's fetch, on the SSRF-safe fetcher: POSTs only, each within what is left of the deadline and the cap. */
function boundedFetch(target: RemoteMcpTarget, deadline: number, failures: SafeFetchError[]): FetchLike {
  return async (url, init) => {
    const method = (init?.method ?? 'GET').toUpperCase();
    if (method !== 'POST') return new Response(null, { status: 405 });
    const remaining = deadline - Date.now();
    try {
      if (remaining <= 0) throw new SafeFetchError('timeout', 'timed out');
      const fetched = await safeFetch(String(url), {
        allowPrivate: target.allowPrivate,
        maxBytes: target.maxBytes,
        timeoutMs: remaining,
        method: 'POST',
        headers: withTraceHeaders({ ...headersOf(init?.headers), ...target.headers }),
        body: typeof init?.body === 'string' ? init.body : '',
        followRedirects: false,
      });
      const empty = fetched.status === 202 || fetched.status === 204 || fetched.body.length === 0;
      const headers = new Headers();
      for (const [name, value] of Object.entries(fetched.headers)) {
        if (name !== 'content-length' && name !== 'transfer-encoding') headers.set(name, value);
      }
      return new Response(empty ? null : new Uint8Array(fetched.body), { status: fetched.status, headers });
    } catch (error) {
      if (error instanceof SafeFetchError) failures.push(error);
      throw error;
    }
  };
}

function headersOf(init: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(init).forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

/** What went wrong, in words safe to show the caller (no stack, no internal address). */
function remoteError(error: unknown, fetchFailure: SafeFetchError | undefined): RemoteMcpError {
  if (error instanceof RemoteMcpError) return error;
  const cause = fetchFailure ?? (error instanceof SafeFetchError ? error : null);
  if (cause) {
    const kind =
      cause.kind === 'not_allowed' || cause.kind === 'too_large' || cause.kind === 'timeout' ? cause.kind : 'failed';
    return new RemoteMcpError(kind, cause.message);
  }
  const message = error instanceof Error ? error.message.split('\n')[0]?.slice(0, 300) || 'failed' : String(error);
  // The SDK's error for a 401 answer carries the status as its code (its message need not say 401).
  const status = error instanceof SdkHttpError ? error.status : undefined;
  if (status === 401 || /\b401\b|unauthori[sz]ed/i.test(message)) return new RemoteMcpError('unauthorized', message);
  if (/timed? ?out|timeout/i.test(message)) return new RemoteMcpError('timeout', message);
  return new RemoteMcpError('failed', message);
}
