/**
 * A remote MCP server's tools as agent tools of one run: named `<server>__<tool>` (a planner's function name:
 * letters, digits, `_` and `-`, at most 64), their arguments checked against the server's input schema by the same
 * bounded JSON-schema checker as every schema Prism takes (a schema over the budget drops the tool, logged), each
 * call bounded in time and bytes (remote-mcp-client.ts) and counted against the run's budget of remote calls.
 */
import { z } from 'zod';
import type { AnyToolDefinition } from '../../agents/sdk';
import { AppError } from '../../domain/errors';
import { checkAgainstSchema, schemaProblem } from '../../lib/json-schema';
import type { Logger } from '../../lib/logger';
import { callRemoteTool, RemoteMcpError, type RemoteMcpTarget, type RemoteMcpTool } from '../../lib/remote-mcp-client';

/**
 * Where and how to call one server, read for each call: an OAuth server's access token may have been refreshed
 * since the run started. `renew` is asked after the server answered 401 (null: a new try cannot help).
 */
export interface RemoteTargetSource {
  current(): Promise<RemoteMcpTarget>;
  renew(rejected: RemoteMcpTarget): Promise<RemoteMcpTarget | null>;
}

/** A call made with the source's target, made once more with a renewed one when the server answered 401. */
export async function withRenewal<T>(
  source: RemoteTargetSource,
  use: (target: RemoteMcpTarget) => Promise<T>,
): Promise<T> {
  const target = await source.current();
  try {
    return await use(target);
  } catch (error) {
    if (!(error instanceof RemoteMcpError) || error.kind !== 'unauthorized') throw error;
    const renewed = await source.renew(target);
    if (!renewed) throw error;
    return use(renewed);
  }
}

/** Remote calls one run may still make (shared by every server of the run). */
export interface RemoteCallBudget {
  left: number;
  max: number;
}

/** The text of one answer a planner is shown at most (the whole answer is already capped in bytes). */
export const MAX_TOOL_TEXT_CHARS = 100_000;
const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Thrown for a remote tool's own failure: its message is what the planner reads as the tool's error. */
export class RemoteToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RemoteToolError';
  }
}

const remoteOutput = z.looseObject({
  server: z.string(),
  tool: z.string(),
  content: z.string(),
  structured: z.record(z.string(), z.unknown()).nullable(),
  truncated: z.boolean(),
});

export function remoteToolsOf(
  serverName: string,
  source: RemoteTargetSource,
  listed: readonly RemoteMcpTool[],
  budget: RemoteCallBudget,
  logger: Logger,
): AnyToolDefinition[] {
  const tools: AnyToolDefinition[] = [];
  for (const remote of listed) {
    const name = `${serverName}__${remote.name}`;
    if (!FUNCTION_NAME.test(name)) {
      logger.warn('a remote MCP tool was left out: its name cannot be a function name', { server: serverName });
      continue;
    }
    const problem = schemaProblem(remote.inputSchema);
    if (problem) {
      logger.warn('a remote MCP tool was left out: its input schema is refused', { tool: name, problem });
      continue;
    }
    const input = z.looseObject({}).superRefine((value, ctx) => {
      const check = checkAgainstSchema(remote.inputSchema, value);
      if (!check.valid) ctx.addIssue({ code: 'custom', message: check.errors.join('; ') });
    });
    tools.push({
      name,
      description: `${remote.description || remote.name} (tool '${remote.name}' of the MCP server '${serverName}')`,
      inputSchema: input,
      outputSchema: remoteOutput,
      annotations: { title: name, readOnlyHint: false, openWorldHint: true },
      parameters: remote.inputSchema,
      async handler(args) {
        if (budget.left <= 0) {
          throw new RemoteToolError(`This run used its ${budget.max} calls to remote MCP servers.`);
        }
        budget.left -= 1;
        let result;
        try {
          result = await withRenewal(source, (target) =>
            callRemoteTool(target, remote.name, args, MAX_TOOL_TEXT_CHARS),
          );
        } catch (error) {
          // A lost OAuth sign-in says so in its own words (AppError `mcp_server_sign_in_required`).
          if (error instanceof AppError) throw new RemoteToolError(error.message);
          const reason = error instanceof RemoteMcpError ? error.message : 'the call failed';
          throw new RemoteToolError(
            `MCP server '${serverName}' did not answer the call of '${remote.name}': ${reason}`,
          );
        }
        if (result.isError) {
          throw new RemoteToolError(`Tool '${remote.name}' of '${serverName}' failed: ${result.text.slice(0, 1000)}`);
        }
        return {
          server: serverName,
          tool: remote.name,
          content: result.text,
          structured: result.structured,
          truncated: result.truncated,
        };
      },
    });
  }
  return tools;
}

/** Whether `tool` names a tool of one of `servers` (`<server>__<tool>`). */
export function isRemoteToolOf(tool: string, servers: readonly string[]): boolean {
  const cut = tool.indexOf('__');
  return cut > 0 && servers.includes(tool.slice(0, cut));
}
