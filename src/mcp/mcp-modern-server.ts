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
import {
  ProtocolError,
  ResourceNotFoundError,
  Server,
  type CacheHint,
  type RequestStateCodec,
} from '@modelcontextprotocol/server';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { askIfPaused, resumeArguments, type ApprovalState } from './mcp-approvals';
import { z } from 'zod';
import type { McpIcon } from './mcp-icon';
import { TASKS_EXTENSION, TaskNotCancellable, TaskNotFound, TaskReadFailed } from './mcp-tasks';
import { RESOURCE_NOT_FOUND } from './mcp-resource-handlers';
import type { McpCallerParts, McpServerInfo } from './mcp-server';
import type { ToolExtra } from './mcp-tool';

/** How long a client may keep a list answer. */
export const LIST_TTL_MS = 5 * 60_000;

const PRIVATE: CacheHint = { ttlMs: LIST_TTL_MS, cacheScope: 'private' };
const PUBLIC: CacheHint = { ttlMs: LIST_TTL_MS, cacheScope: 'public' };

/** A v2 server answering one request for the caller `parts` was built for. */
export function createModernServer(
  info: McpServerInfo,
  parts: McpCallerParts,
  approvals: RequestStateCodec<ApprovalState>,
  icons: McpIcon[] = info.icons,
): Server {
  // The low-level server: McpServer would advertise listChanged, a notification these lists never send.
  const server = new Server(
    { name: info.name, title: info.title, version: info.version, icons },
    {
      instructions: info.instructions,
      capabilities: { tools: {}, resources: {}, prompts: {}, extensions: { [TASKS_EXTENSION]: {} } },
      cacheHints: {
        'tools/list': PRIVATE,
        'resources/list': PRIVATE,
        'resources/templates/list': PUBLIC,
        'prompts/list': PUBLIC,
        'server/discover': PUBLIC,
      },
      // An approval's state is checked (HMAC, expiry, caller) before the handler runs (mcp-approvals.ts).
      requestState: { verify: (state, ctx) => approvals.verify(state, ctx) },
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
    const state = ctx.mcpReq.requestState<ApprovalState>();
    let result: CallToolResult;
    if (state !== undefined) {
      // The retry of a call that asked a person (mcp-approvals.ts): resume the run with the answer.
      let resume: Record<string, unknown>;
      try {
        resume = resumeArguments(state, ctx.mcpReq.inputResponses);
      } catch (error) {
        throw new ProtocolError(-32602, (error as Error).message);
      }
      result = await parts.resume(resume, extra);
    } else if (parts.tasks.defers(request.params.name) && declaresTasks(ctx.mcpReq.envelope)) {
      // A long tool becomes a task for a client that declared the tasks extension on this request (mcp-tasks.ts).
      return (await parts.tasks.start(request.params.name, request.params.arguments, extra)) as never;
    } else {
      result = await parts.callTool(request.params.name, request.params.arguments, extra);
    }
    // A run paused for a person asks them, when the client can be asked.
    return (await askIfPaused(result, ctx, approvals)) ?? result;
  });
  low.setRequestHandler('tasks/get', { params: TASK_PARAMS }, async (params, ctx) => {
    const extra: ToolExtra = {
      signal: ctx.mcpReq.signal,
      sendNotification: (notification) => ctx.mcpReq.notify(notification),
    };
    try {
      return (await parts.tasks.get(params.taskId, extra)) as never;
    } catch (error) {
      throw taskError(error);
    }
  });
  low.setRequestHandler('tasks/cancel', { params: TASK_PARAMS }, async (params) => {
    try {
      await parts.tasks.cancel(params.taskId);
      return {};
    } catch (error) {
      throw taskError(error);
    }
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

const TASK_PARAMS = z.object({ taskId: z.string().min(1).max(300) }).loose();

/** Whether the request's capabilities (its `_meta` envelope) declare the tasks extension. */
function declaresTasks(envelope: Record<string, unknown> | undefined): boolean {
  const capabilities = envelope?.['io.modelcontextprotocol/clientCapabilities'] as
    { extensions?: Record<string, unknown> } | undefined;
  return capabilities?.extensions?.[TASKS_EXTENSION] !== undefined;
}

/** Task refusals as JSON-RPC errors: an unknown task is -32602, as an unknown resource is; the rest -32600. */
function taskError(error: unknown): unknown {
  if (error instanceof TaskNotFound) return new ProtocolError(-32602, error.message, { taskId: error.taskId });
  if (error instanceof TaskNotCancellable) return new ProtocolError(-32600, error.message, { taskId: error.taskId });
  if (error instanceof TaskReadFailed) return new ProtocolError(-32600, error.message);
  return error;
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
