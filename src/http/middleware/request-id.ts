/**
 * Request ids: echo a caller's `x-request-id` when it is sane, else mint one (src/wire/request-id.ts); every
 * response carries it.
 */
import type { RequestHandler } from 'express';
import { resolveRequestId } from '../../wire/request-id';

export function requestId(): RequestHandler {
  return (req, res, next) => {
    req.requestId = resolveRequestId(req.headers['x-request-id']);
    res.setHeader('x-request-id', req.requestId);
    next();
  };
}
