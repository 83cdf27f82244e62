/**
 * The MCP adapter's error translator: AppErrors become what an MCP client understands.
 *
 * Inside a tool call an error is a tool result with `isError: true` whose text is the same `{error:{…}}` object the
 * REST API sends, so a model reads the spec's code and can correct itself. Before a call can run (auth, Host check,
 * body limits) it is an HTTP status with a JSON-RPC error body. Unknown errors never leak: they become a generic
 * `internal_error` and are logged with the request id.
 */
import type { ServerResponse } from 'node:http';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AppError, WorkBudgetExceededError } from '../domain/errors';
import type { Logger } from '../lib/logger';
import { WorkBudgetExceeded } from '../lib/work-budget';
import { errorHeaders } from '../wire/error-body';

/** JSON-RPC code for a request refused before it reached the server (the SDK's own HTTP-level refusals use it). */
const REFUSED = -32000;
const INTERNAL = -32603;
/** JSON-RPC 2.0: the body is not JSON (or nested past the limit, so it is never parsed). */
export const PARSE_ERROR = -32700;

function internalError(): AppError {
  return new AppError(500, {
    message: 'The server had an internal error while processing the request.',
    type: 'internal_server_error',
    code: 'internal_error',
  });
}

/**
 * The AppError of an error an MCP request may meet: AppErrors as they are, and the request's work budget running
 * out (src/lib/work-budget.ts) as the 413 `work_budget_exceeded` REST answers; null for anything unexpected.
 */
export function knownError(error: unknown): AppError | null {
  if (error instanceof AppError) return error;
  if (error instanceof WorkBudgetExceeded) {
    return new WorkBudgetExceededError(error.message, error.limit, error.allowed, error.caller === 'anonymous');
  }
  return null;
}

/** The `{error:{…}}` object REST would send for this error (the JSON text of an MCP tool error). */
export function errorObject(error: AppError, requestId: string): { error: Record<string, unknown> } {
  return {
    error: {
      message: error.message,
      type: error.type,
      code: error.code,
      param: error.param,
      ...error.extra,
      ...(error.retryAfterSeconds === undefined ? {} : { retry_after: error.retryAfterSeconds }),
      status: error.status,
      request_id: requestId,
    },
  };
}

/**
 * Runs a service call whose errors name REST fields (`images`, `images.0`) and renames them to the tool's own
 * parameters (`data`), in `param` and in the message, so a model corrects the argument it actually sent.
 */
export async function withToolParams<T>(renames: Readonly<Record<string, string>>, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const param = error.param !== null ? renames[error.param] : undefined;
    let message = error.message;
    for (const [from, to] of Object.entries(renames)) message = message.split(`\`${from}\``).join(`\`${to}\``);
    if (param === undefined && message === error.message) throw error;
    throw new AppError(error.status, {
      message,
      type: error.type,
      code: error.code,
      param: param ?? error.param,
      ...(error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds }),
      extra: error.extra,
      issues: error.issues,
    });
  }
}

/** Turns anything a tool threw into an `isError` tool result; unknown errors are logged and not shown. */
export function toToolError(error: unknown, requestId: string, logger: Logger): CallToolResult {
  let appError = knownError(error);
  if (!appError) {
    logger.error('mcp tool failed', { request_id: requestId, error: describe(error) });
    appError = internalError();
  }
  const body = errorObject(appError, requestId);
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
}

/**
 * Writes an HTTP-level refusal of `/mcp` (401, 403, 413, 429, 503…) as a JSON-RPC error, with the error's headers
 * and `Retry-After`. The caller decides about `WWW-Authenticate`: only an unknown key carries a challenge.
 */
export function sendJsonRpcError(
  res: ServerResponse,
  error: unknown,
  requestId: string,
  logger: Logger,
  /** The JSON-RPC code; by default -32603 for 5xx and -32000 (refused) otherwise. */
  jsonRpcCode?: number,
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const known = knownError(error);
  if (!known) logger.error('mcp request failed', { request_id: requestId, error: describe(error) });
  const appError = known ?? internalError();
  for (const [name, value] of Object.entries(errorHeaders(appError))) res.setHeader(name, value);
  const body = {
    jsonrpc: '2.0',
    error: {
      code: jsonRpcCode ?? (appError.status >= 500 ? INTERNAL : REFUSED),
      message: appError.message,
      data: errorObject(appError, requestId).error,
    },
    id: null,
  };
  res.statusCode = appError.status;
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify(body));
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : String(error);
}
