/**
 * What an MCP tool is here, and the one way tools are put on a server.
 *
 * A tool is a name, zod input and output schemas, honest annotations and `run(args, ctx)` that calls a service and
 * returns the REST body. `registerTools` wraps every tool the same way: account check for tools that need one, the
 * gateway's per-caller rate limit, progress notifications, cancellation, and the error translator, so a tool's own
 * code is only its service call. The result is `structuredContent` (the REST body) plus the same JSON as text, then
 * any blocks the tool attached (a skill's zip as an embedded resource).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ErrorCode,
  McpError,
  type CallToolResult,
  type ContentBlock,
  type ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { Principal } from '../domain/account';
import { AppError, ClientDisconnectedError } from '../domain/errors';
import { RateLimitExceededError } from '../metering/metering-errors';
import type { Logger } from '../lib/logger';
import { spendWork, structureBytes } from '../lib/work-budget';
import { toToolError } from './mcp-errors';
import type { ToolCallLimiter } from './mcp-rate-limits';
import { TOOLSET_SUMMARY, type McpToolset } from './mcp-toolsets';

/** How often a long call says it is still alive when it has no progress of its own to report. */
const HEARTBEAT_MS = 10_000;

/** What a tool knows about the call it serves. */
export interface McpCallContext {
  principal: Principal;
  requestId: string;
  /** Base for links in answers (file public URLs). */
  baseUrl: string;
  /** Aborted when the client cancels the call or goes away. */
  signal: AbortSignal;
  /** Reports `done` of `total` units (pages, frames); a no-op when the client asked for no progress. */
  progress(done: number, total?: number, message?: string): void;
  /** Adds a content block after the JSON text (an embedded resource, an image); structured content is unchanged. */
  attach(block: ContentBlock): void;
}

type ObjectSchema = z.ZodObject;

/** One tool: its wire contract and the service call behind it. */
export interface McpTool<I extends ObjectSchema = ObjectSchema, O extends ObjectSchema = ObjectSchema> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  /** Anonymous callers get an `isError` result saying an account is needed (and do not see it listed). */
  needsAccount: boolean;
  /** The toolset a connection selects it by; set by the server factory. */
  toolset?: McpToolset;
  /** Other toolsets that also offer it (execute_agent is in `agents` and in the default `run`). */
  alsoIn?: readonly McpToolset[];
  run(args: z.output<I>, ctx: McpCallContext): Promise<z.output<O>>;
}

/** Keeps a tool's argument and result types tied to its schemas, and erases them for the registry list. */
export function defineMcpTool<I extends ObjectSchema, O extends ObjectSchema>(tool: McpTool<I, O>): McpTool {
  return tool;
}

/** Who calls, and the per-call services the wrapper needs. */
export interface McpCallScope {
  principal: Principal;
  requestId: string;
  baseUrl: string;
  logger: Logger;
  /** Tool-call budgets by tier; absent for the local stdio server, whose only caller is the owner. */
  limiter?: ToolCallLimiter;
  /** The toolsets this connection selected: only their tools are listed and callable. */
  toolsets: readonly McpToolset[];
}

/** Puts `tools` on `server`, each wrapped with the account check, rate limit, progress, cancellation and errors. */
export function registerTools(server: McpServer, tools: readonly McpTool[], scope: McpCallScope): void {
  for (const tool of tools) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.input,
        outputSchema: tool.output,
        annotations: { title: tool.title, ...tool.annotations },
      },
      ((args: unknown, extra: ToolExtra) => callTool(tool, args, extra, scope)) as never,
    );
  }
}

/** Whether a connection that selected `toolsets` is offered `tool` (its own toolset or one it is also in). */
export function isOffered(tool: McpTool, toolsets: readonly McpToolset[]): boolean {
  if (tool.toolset === undefined) return true;
  return toolsets.includes(tool.toolset) || (tool.alsoIn ?? []).some((set) => toolsets.includes(set));
}

/** Told of every `tools/call` answered (the metrics' MCP tool-call counter). */
export type ToolCallObserver = (tool: string, outcome: 'ok' | 'error') => void;

/** Runs a `tools/call` request against a tool list; built once, shared by every per-request server. */
export interface ToolDispatcher {
  call(name: string, args: unknown, extra: ToolExtra, scope: McpCallScope): Promise<CallToolResult>;
}

/**
 * The SDK's `registerTool` costs tens of µs per tool on every server (the stateless route builds one per request),
 * so the HTTP and stdio servers answer `tools/call` through this dispatcher instead: the same steps as the SDK's
 * handler (unknown tool, zod input check, the call, output check against the advertised schema), with the same
 * `isError` texts, on a map built once. `registerTools` stays for the one server whose `tools/list` is cached.
 */
export function createToolDispatcher(
  tools: readonly McpTool[],
  onCall: ToolCallObserver = () => undefined,
): ToolDispatcher {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const dispatch: ToolDispatcher['call'] = async (name, args, extra, scope) => {
    const tool = byName.get(name);
    if (!tool) return protocolError(`Tool ${name} not found`);
    if (tool.toolset !== undefined && !isOffered(tool, scope.toolsets)) {
      return protocolError(
        `Tool ${name} is in the '${tool.toolset}' toolset (${TOOLSET_SUMMARY[tool.toolset]}), which this ` +
          `connection did not select: add ${tool.toolset} to ?toolsets= on the /mcp URL (or prism mcp --toolsets).`,
      );
    }
    try {
      // Checking the caller's arguments is work on caller structure: it draws on the POST's work budget
      // (anonymous or keyed), so the calls of one POST add up.
      spendWork('bytes', structureBytes(args ?? {}));
    } catch (error) {
      return toToolError(error, scope.requestId, scope.logger);
    }
    const input = await tool.input.safeParseAsync(args ?? {});
    if (!input.success) {
      return protocolError(`Input validation error: Invalid arguments for tool ${name}: ${issuesText(input.error)}`);
    }
    const result = await callTool(tool, input.data, extra, scope);
    if (result.isError) return result;
    const output = await tool.output.safeParseAsync(result.structuredContent);
    if (!output.success) {
      return protocolError(
        `Output validation error: Invalid structured content for tool ${name}: ${issuesText(output.error)}`,
      );
    }
    return result;
  };
  return {
    async call(name, args, extra, scope) {
      const result = await dispatch(name, args, extra, scope);
      // A name the caller made up is counted as `unknown`, so callers cannot grow the metric's label set.
      onCall(byName.has(name) ? name : 'unknown', result.isError ? 'error' : 'ok');
      return result;
    },
  };
}

/** An `isError` result with the text the SDK writes for its own refusals (`MCP error -32602: …`). */
function protocolError(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: new McpError(ErrorCode.InvalidParams, message).message }] };
}

function issuesText(error: z.ZodError): string {
  return error.issues
    .map((issue) => (issue.path.length ? `${issue.message} at ${issue.path.map(String).join('.')}` : issue.message))
    .join('\n');
}

/** The parts of the SDK's request extra a tool call uses. */
export interface ToolExtra {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number };
  sendNotification(notification: {
    method: 'notifications/progress';
    params: { progressToken: string | number; progress: number; total?: number; message?: string };
  }): Promise<void>;
}

async function callTool(tool: McpTool, args: unknown, extra: ToolExtra, scope: McpCallScope): Promise<CallToolResult> {
  const reporter = progressReporter(extra);
  try {
    if (tool.needsAccount && scope.principal.kind !== 'user') throw accountNeeded(tool.name);
    await checkRateLimit(scope);
    const attached: ContentBlock[] = [];
    const ctx: McpCallContext = {
      principal: scope.principal,
      requestId: scope.requestId,
      baseUrl: scope.baseUrl,
      signal: extra.signal,
      progress: reporter.report,
      attach: (block) => attached.push(block),
    };
    const out = await untilAborted(tool.run(args as never, ctx), extra.signal);
    return { content: [{ type: 'text', text: JSON.stringify(out) }, ...attached], structuredContent: out };
  } catch (error) {
    return toToolError(error, scope.requestId, scope.logger);
  } finally {
    reporter.stop();
  }
}

function accountNeeded(tool: string): AppError {
  return new AppError(401, {
    message:
      `The tool '${tool}' needs a Prism account: configure the MCP client with "Authorization: Bearer <API key>". ` +
      'Anonymous callers can use the hub tools and resources.',
    type: 'authentication_error',
    code: 'missing_api_key',
  });
}

/** One call of the caller's tool-call budget (its tier's calls a minute, mcp-rate-limits.ts). */
async function checkRateLimit(scope: McpCallScope): Promise<void> {
  if (!scope.limiter) return;
  const decision = await scope.limiter.check(scope.principal);
  if (!decision || decision.allowed) return;
  throw new RateLimitExceededError({
    window: decision.label,
    retryAfterS: decision.retryAfterS,
    tier: scope.principal.kind === 'user' ? scope.principal.tier : 'anonymous',
    anonymous: scope.principal.kind === 'anonymous',
  });
}

/** Progress notifications for the call's token: real progress when the tool has some, a heartbeat otherwise. */
function progressReporter(extra: ToolExtra): { report: McpCallContext['progress']; stop(): void } {
  const token = extra._meta?.progressToken;
  if (token === undefined) return { report: () => undefined, stop: () => undefined };
  let last = 0;
  let total: number | undefined;
  const send = (progress: number, message?: string): void => {
    last = progress;
    const params = {
      progressToken: token,
      progress,
      ...(total === undefined ? {} : { total }),
      ...(message ? { message } : {}),
    };
    extra.sendNotification({ method: 'notifications/progress', params }).catch(() => undefined);
  };
  // Progress must grow with every notification, so a heartbeat adds a sliver to the last real value.
  const heartbeat = setInterval(() => send(last + 0.001, 'working'), HEARTBEAT_MS);
  heartbeat.unref();
  return {
    report(done, newTotal, message) {
      if (newTotal !== undefined) total = newTotal;
      if (done > last) send(done, message);
    },
    stop: () => clearInterval(heartbeat),
  };
}

/**
 * Resolves with the tool's result, or rejects as soon as the call is cancelled. The SDK sends nothing for a
 * cancelled request. Tools that pass `ctx.signal` on stop their work (a waiting extraction: its prediction ends
 * `failed`, readable by id); work a tool committed without it finishes.
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new ClientDisconnectedError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new ClientDisconnectedError());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
