/**
 * The 2026-07-28 server for one caller, on the official SDK's v2 line (`@modelcontextprotocol/server`): no
 * initialize handshake and no session, `server/discover` answered by the SDK, cache hints on the list results, and
 * the per-request `_meta` envelope read by the SDK. Its answers come from the same parts as the 2025 server
 * (mcp-server.ts `parts`): the same tool list, dispatcher, resources and prompts, so the eras cannot drift.
 *
 * Cache hints (`ttlMs` / `cacheScope`): `tools/list` differs per caller (toolsets, anonymous or keyed) and
 * `resources/list` names the caller's skills, so both are `private`; the prompts, the resource templates and
 * `server/discover` are the same for everyone (`public`). Lists are served from memory; a client may keep them a
 * few minutes (a new Prism version changes them only on restart, when clients rediscover anyway).
 */
import { ProtocolError, ResourceNotFoundError, Server, type CacheHint } from '@modelcontextprotocol/server';
import type { McpIcon } from './mcp-icon';
import { RESOURCE_NOT_FOUND } from './mcp-resource-handlers';
import type { McpCallerParts, McpServerInfo } from './mcp-server';
import type { ToolExtra } from './mcp-tool';

/** How long a client may keep a list answer. */
export const LIST_TTL_MS = 5 * 60_000;

const PRIVATE: CacheHint = { ttlMs: LIST_TTL_MS, cacheScope: 'private' };
const PUBLIC: CacheHint = { ttlMs: LIST_TTL_MS, cacheScope: 'public' };

/** A v2 server answering one request for the caller `parts` was built for. */
export function createModernServer(info: McpServerInfo, parts: McpCallerParts, icons: McpIcon[] = info.icons): Server {
  // The low-level server: McpServer would advertise listChanged, a notification these lists never send.
  const server = new Server(
    { name: info.name, title: info.title, version: info.version, icons },
    {
      instructions: info.instructions,
      capabilities: { tools: {}, resources: {}, prompts: {} },
      cacheHints: {
        'tools/list': PRIVATE,
        'resources/list': PRIVATE,
        'resources/templates/list': PUBLIC,
        'prompts/list': PUBLIC,
        'server/discover': PUBLIC,
      },
    },
  );
  const low = server;
  // The cached list is the v1 SDK's type; the wire shape is the same.
  low.setRequestHandler('tools/list', async () => (await parts.listTools()) as never);
  low.setRequestHandler('tools/call', async (request, ctx) => {
    const meta = ctx.mcpReq._meta as NonNullable<ToolExtra['_meta']> | undefined;
    const extra: ToolExtra = {
      signal: ctx.mcpReq.signal,
      ...(meta ? { _meta: meta } : {}),
      sendNotification: (notification) => ctx.mcpReq.notify(notification),
    };
    return parts.callTool(request.params.name, request.params.arguments, extra);
  });
  low.setRequestHandler('resources/list', () => parts.resources.list());
  low.setRequestHandler('resources/templates/list', () => parts.resources.templates());
  low.setRequestHandler('resources/read', async (request) => {
    try {
      return await parts.resources.read(request.params.uri);
    } catch (error) {
      throw asProtocolError(error);
    }
  });
  low.setRequestHandler('prompts/list', () => parts.prompts.list());
  low.setRequestHandler('prompts/get', (request) => {
    try {
      return parts.prompts.get(request.params.name, request.params.arguments);
    } catch (error) {
      throw asProtocolError(error);
    }
  });
  return server;
}

/**
 * The shared parts throw the v1 SDK's McpError (a JSON-RPC code and data, its message prefixed `MCP error N:`),
 * carried over as the v2 SDK's ProtocolError with its code, message and data. An unknown resource is the one
 * difference between the eras: -32002 in 2025, and in 2026-07-28 the spec's -32602 with `data: {uri}`
 * (ResourceNotFoundError), which v2 clients read as resource-not-found.
 */
function asProtocolError(error: unknown): unknown {
  const { code, data, message } = error as { code?: unknown; data?: unknown; message?: unknown };
  if (typeof code !== 'number' || typeof message !== 'string' || error instanceof ProtocolError) return error;
  const text = message.replace(/^MCP error -?\d+: /, '');
  const uri = (data as { uri?: unknown } | undefined)?.uri;
  if (code === RESOURCE_NOT_FOUND && typeof uri === 'string') return new ResourceNotFoundError(uri, text);
  return new ProtocolError(code, text, data);
}
