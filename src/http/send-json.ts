/**
 * A JSON response written on a plain node response, byte for byte what express's `res.status(n).json(body)` sends
 * here (ETags are off): the gateway fast lane and the error responder use it outside express.
 *
 * It never throws: a body that cannot be serialised (too deep, a cycle, a BigInt) is answered with a fixed JSON 500
 * instead, since a throw here would escape the error handler and reach node as an uncaught exception.
 */
import type { ServerResponse } from 'node:http';

/** The last-resort answer: fixed bytes, no stack, no path, nothing from the failed body. */
export const LAST_RESORT_BODY =
  '{"error":{"message":"The server had an internal error while processing the request.","type":"internal_server_error","code":"internal_error","param":null}}';

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  let payload: string;
  try {
    payload = JSON.stringify(body);
  } catch {
    sendLastResort(res);
    return;
  }
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(payload));
  res.end(payload);
}

/** Writes {@link LAST_RESORT_BODY} as a 500, or drops the connection when headers already went out. */
export function sendLastResort(res: ServerResponse): void {
  try {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.statusCode = 500;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(LAST_RESORT_BODY));
    res.end(LAST_RESORT_BODY);
  } catch {
    res.destroy();
  }
}
