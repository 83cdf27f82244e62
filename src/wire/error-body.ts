/**
 * The JSON body of an error response, per surface.
 *
 * The main API answers in the spec's shapes only: `{detail:{error}}`, top-level `{error}` (429, 5xx),
 * `{detail:"Invalid API Key"}` and `{detail:[issues]}` (422). OpenAI-compatible clients (the `openai` SDKs,
 * LangChain) read only a top-level `error` object, so on the gateway surfaces (`/v1/compat`, `/v1/openai`) every
 * body also carries one beside the spec's `detail`: both kinds of reader find what they look for.
 *
 * Errors say what went wrong; the shape and the headers are decided here, from the error's status and class, so
 * other adapters (MCP, WebSocket) can render the same error their own way.
 */
import type { ServerResponse } from 'node:http';
import { InvalidApiKeyError, type AppError, type ValidationIssue } from '../domain/errors';
import { clipForEcho } from '../lib/json-bounds';

/** Which family of clients an error is written for: the main API's, or the OpenAI-compatible gateway's. */
export type ErrorSurface = 'main' | 'gateway';

/**
 * Writes an error as the spec's response on a plain node response (express's, the gateway fast lane's, or a refused
 * WebSocket upgrade's), in the body shape of the surface the request arrived on. The HTTP adapter builds it; the
 * WebSocket adapter is handed one.
 */
export type ErrorResponder = (res: ServerResponse, error: unknown, requestId: string, surface: ErrorSurface) => void;

const GATEWAY_PREFIXES = ['/v1/compat', '/v1/openai'];

/** The surface a request path belongs to (`/v1/compat/...` and `/v1/openai/...` are the gateway). */
export function surfaceOfPath(path: string): ErrorSurface {
  for (const prefix of GATEWAY_PREFIXES) {
    if (path.startsWith(prefix) && (path.length === prefix.length || '/?'.includes(path.charAt(prefix.length)))) {
      return 'gateway';
    }
  }
  return 'main';
}

/** How an error is rendered: `{detail:{error}}`, top-level `{error}`, `{detail:"text"}` or `{detail:[issues]}`. */
export type ErrorShape = 'wrapped' | 'top-level' | 'plain-detail' | 'validation';

/**
 * The spec's body shape for an error: `{detail:[issues]}` for 422, `{detail:"Invalid API Key"}` for an unknown key,
 * `{detail:{error}}` for 503 (a dependency down: retry later) and every 4xx, top-level `{error}` for 429 and 5xx.
 */
export function errorShape(error: AppError): ErrorShape {
  if (error.status === 422) return 'validation';
  if (error instanceof InvalidApiKeyError) return 'plain-detail';
  if (error.status === 503) return 'wrapped';
  if (error.status === 429 || error.status >= 500) return 'top-level';
  return 'wrapped';
}

/** The response headers an error brings: `Retry-After` (seconds to wait) and `X-Prism-Upgrade` (get a key). */
export function errorHeaders(error: AppError): Record<string, string> {
  return {
    ...(error.retryAfterSeconds === undefined ? {} : { 'Retry-After': String(error.retryAfterSeconds) }),
    ...(error.suggestsApiKey ? { 'X-Prism-Upgrade': 'api-key' } : {}),
  };
}

/** The `{message,type,code,param}` object OpenAI clients read, plus any extra fields and the request id. */
export interface ErrorObject {
  message: string;
  type: string;
  code: string | null;
  param: string | null;
  request_id: string;
  [extra: string]: unknown;
}

/** The body for `error`, as the spec shapes it, with the top-level `error` object added on the gateway. */
export function renderErrorBody(error: AppError, requestId: string, surface: ErrorSurface): unknown {
  const fields: ErrorObject = {
    message: error.message,
    type: error.type,
    code: error.code,
    param: error.param,
    ...error.extra,
    request_id: requestId,
  };
  const gateway = surface === 'gateway';
  switch (errorShape(error)) {
    case 'validation': {
      const detail = error.issues.map(boundedIssue);
      return gateway ? { detail, error: validationSummary(error, requestId) } : { detail };
    }
    case 'plain-detail':
      return gateway ? { detail: error.message, error: fields } : { detail: error.message };
    case 'top-level':
      return { error: fields };
    case 'wrapped':
      return gateway ? { detail: { error: fields }, error: fields } : { detail: { error: fields } };
  }
}

/**
 * One error object standing for a 422's issue list: `param` is the first bad field as a dotted path
 * (`messages.0.role`), and the message names it and what is wrong with it.
 */
function validationSummary(error: AppError, requestId: string): ErrorObject {
  const first = error.issues[0];
  const param = first ? fieldPath(first) : null;
  const more = error.issues.length - 1;
  const what = first ? `${param ?? first.loc[0] ?? 'body'}: ${first.msg}` : error.message;
  return {
    message: `Invalid request: ${what}${more > 0 ? ` (and ${more} more issue${more === 1 ? '' : 's'} in detail)` : ''}`,
    type: error.type,
    code: error.code,
    param,
    request_id: requestId,
  };
}

/** The issue's location without its leading `body`/`query`/`path`; null when it is the whole input. */
function fieldPath(issue: ValidationIssue): string | null {
  if (issue.type === 'json_invalid') return null;
  const path = issue.loc.slice(1);
  return path.length === 0 ? null : path.join('.');
}

/** An issue whose echoed `input` (and `ctx`) is cut to a bounded size and depth. */
function boundedIssue(issue: ValidationIssue): ValidationIssue {
  const bounded: ValidationIssue = { ...issue, input: clipForEcho(issue.input) };
  if (issue.ctx !== undefined) bounded.ctx = clipForEcho(issue.ctx) as Record<string, unknown>;
  return bounded;
}
