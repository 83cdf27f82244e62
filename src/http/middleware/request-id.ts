/**
 * Request ids: echo a caller's `x-request-id` when it is sane, else mint one; every response carries it.
 */
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

const ACCEPTABLE = /^[\w.:@/+=-]{1,128}$/;

export function requestId(): RequestHandler {
  return (req, res, next) => {
    const incoming = req.get('x-request-id');
    req.requestId = incoming && ACCEPTABLE.test(incoming) ? incoming : `req_${randomUUID().replace(/-/g, '')}`;
    res.setHeader('x-request-id', req.requestId);
    next();
  };
}
