/**
 * Request ids, as every adapter reads them: a caller's `x-request-id` when it is sane, else a new one. The HTTP
 * middleware, the gateway fast lane and the WebSocket upgrade share this rule.
 */
import { randomHex } from '../lib/random-id';

const ACCEPTABLE = /^[\w.:@/+=-]{1,128}$/;

/** The id of a request: the caller's `x-request-id` when it is sane, else a new `req_<32 hex>`. */
export function resolveRequestId(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && ACCEPTABLE.test(incoming) ? incoming : `req_${randomHex(16)}`;
}
