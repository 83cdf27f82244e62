/**
 * The one place errors become HTTP responses.
 *
 * Renders the spec's shapes: `{detail:{error:{message,type,code,param}}}` for most errors, top-level `{error}`
 * for 429 and 5xx, `{detail:"Invalid API Key"}` for a bad key, and `{detail:[…]}` for 422; on the gateway
 * surfaces every body also carries the top-level `error` OpenAI clients read (see src/wire/error-body.ts).
 * Unknown errors become a generic 500 carrying only the request id: no stack, no path, no message from inside.
 *
 * The responder itself never throws: a caller's input echoed in a 422 is cut to a bounded size and depth first
 * (src/wire/error-body.ts), and anything that still goes wrong while rendering falls back to a fixed JSON 500 (an
 * error escaping here would make express answer with its HTML page and stack, or take the process down on the
 * gateway fast lane).
 */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { AppError, PayloadTooLargeError, RequestValidationError, WorkBudgetExceededError } from '../../domain/errors';
import { WorkBudgetExceeded } from '../../lib/work-budget';
import type { Logger } from '../../lib/logger';
import { errorHeaders, renderErrorBody, surfaceOfPath, type ErrorResponder } from '../../wire/error-body';
import { sendJson, sendLastResort } from '../send-json';

interface BodyParserError {
  type?: string;
  status?: number;
  expose?: boolean;
  limit?: number;
  body?: string;
  message?: string;
}

export function createErrorResponder(logger: Logger, limits: { maxJsonBytes: number }): ErrorResponder {
  return (res, error, requestId, surface) => {
    try {
      const appError = toAppError(error, limits.maxJsonBytes);
      if (!appError) {
        logger.error('unhandled error', { request_id: requestId, error: describe(error) });
      } else if (appError.code === 'request_aborted' || appError.code === 'client_disconnected') {
        logger.debug('client went away', { request_id: requestId });
      }
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const rendered = appError ?? internalError();
      for (const [name, value] of Object.entries(errorHeaders(rendered))) res.setHeader(name, value);
      if (rendered.status === 413) res.setHeader('Connection', 'close');
      sendJson(res, rendered.status, renderErrorBody(rendered, requestId, surface));
    } catch {
      sendLastResort(res);
    }
  };
}

export function errorHandler(logger: Logger, limits: { maxJsonBytes: number }): ErrorRequestHandler {
  const respond = createErrorResponder(logger, limits);
  return (error: unknown, req, res, _next) => respond(res, error, req.requestId, surfaceOfPath(req.originalUrl));
}

/** 404 for paths no router matched, in the wrapped shape. */
export function notFoundHandler(): RequestHandler {
  return (req, _res, next) => {
    next(
      new AppError(404, {
        message: `No route for ${req.method} ${req.path}`,
        type: 'not_found_error',
        code: 'route_not_found',
      }),
    );
  };
}

function internalError(): AppError {
  return new AppError(500, {
    message: 'The server had an internal error while processing the request.',
    type: 'internal_server_error',
    code: 'internal_error',
  });
}

/** Known errors, including the body parser's, as AppErrors; null for anything unexpected. */
function toAppError(error: unknown, maxJsonBytes: number): AppError | null {
  if (error instanceof AppError) return error;
  if (error instanceof WorkBudgetExceeded) {
    return new WorkBudgetExceededError(error.message, error.limit, error.allowed, error.caller === 'anonymous');
  }
  // The router decoding a path parameter (`/v1/files/%`, `%zz`): the client's bytes, not a server fault.
  if (error instanceof URIError) {
    return new AppError(400, {
      message: 'The request path is not valid percent-encoding',
      type: 'invalid_request_error',
    });
  }
  const parserError = error as BodyParserError;
  const type = parserError?.type;
  if (type === JSON_TOO_DEEP) return jsonTooDeepError();
  if (isBodyReadFailure(type)) return bodyReadError(type, parserError.limit ?? maxJsonBytes);
  // Other body-parser failures (a corrupt gzip/br body, a stream error) are the client's bytes: 400, not 500.
  const status = parserError?.status;
  if (parserError?.expose === true && typeof status === 'number' && status >= 400 && status < 500) {
    return new AppError(400, {
      message: 'The request body could not be read',
      type: 'invalid_request_error',
      code: 'malformed_body',
    });
  }
  return null;
}

/** The `type` the JSON body reader gives an error for a body nested deeper than the limit. */
export const JSON_TOO_DEEP = 'entity.too.deep';

/** A body nested deeper than `PRISM_MAX_JSON_DEPTH`: the 422 a malformed body gets, saying why. */
export function jsonTooDeepError(): AppError {
  return new RequestValidationError([
    {
      type: 'json_invalid',
      loc: ['body', 0],
      msg: 'JSON decode error',
      input: {},
      ctx: { error: 'JSON nested too deeply' },
    },
  ]);
}

/** The body-parser error types (`error.type`) that mean the request body could not be read. */
const BODY_READ_FAILURES = [
  'entity.too.large',
  'entity.parse.failed',
  'encoding.unsupported',
  'charset.unsupported',
  'request.aborted',
] as const;
export type BodyReadFailure = (typeof BODY_READ_FAILURES)[number];

function isBodyReadFailure(type: string | undefined): type is BodyReadFailure {
  return (BODY_READ_FAILURES as readonly (string | undefined)[]).includes(type);
}

/**
 * The answer to a body that could not be read, named by express's body-parser error `type`. The gateway fast
 * lane, which reads bodies itself, throws these too, so both paths answer alike.
 */
export function bodyReadError(type: BodyReadFailure, limitBytes: number): AppError {
  switch (type) {
    case 'entity.too.large':
      return new PayloadTooLargeError(limitBytes);
    case 'entity.parse.failed':
      return new RequestValidationError([
        {
          type: 'json_invalid',
          loc: ['body', 0],
          msg: 'JSON decode error',
          input: {},
          ctx: { error: 'Invalid JSON in request body' },
        },
      ]);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError(415, {
        message: 'Unsupported content encoding or charset',
        type: 'invalid_request_error',
        code: 'unsupported_media_type',
      });
    case 'request.aborted':
      return new AppError(400, {
        message: 'The request was aborted by the client',
        type: 'invalid_request_error',
        code: 'request_aborted',
      });
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : String(error);
}
