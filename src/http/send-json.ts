/**
 * A JSON response written on a plain node response, byte for byte what express's `res.status(n).json(body)` sends
 * here (ETags are off): the gateway fast lane and the error responder use it outside express.
 */
import type { ServerResponse } from 'node:http';

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const payload = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(payload));
  res.end(payload);
}
