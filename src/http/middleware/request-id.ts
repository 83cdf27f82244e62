/**
 * Request ids: echo a caller's `x-request-id` when it is sane, else mint one; every response carries it.
 */
import type { RequestHandler } from 'express';
import { randomHex } from '../../lib/random-id';

const ACCEPTABLE = /^[\w.:@/+=-]{1,128}$/;

/** The id of a request: the caller's `x-request-id` when it is sane, else a new `req_<32 hex>`. */
export function resolveRequestId(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && ACCEPTABLE.test(incoming) ? incoming : `req_${randomHex(16)}`;
}

export function requestId(): RequestHandler {
  return (req, res, next) => {
    req.requestId = resolveRequestId(req.headers['x-request-id']);
    res.setHeader('x-request-id', req.requestId);
    next();
  };
}
