/**
 * A loopback server that records the callbacks Prism sends (`callback_url` of batch predictions and executions):
 * each body as sent, with its `x-prism-signature` and `x-prism-event` headers, answered 200.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedCallback {
  body: string;
  signature: string;
  event: string;
}

export interface CallbackReceiver {
  /** The URL to pass as `callback_url`. */
  url: string;
  received: ReceivedCallback[];
  close(): Promise<void>;
}

export async function startCallbackReceiver(): Promise<CallbackReceiver> {
  const received: ReceivedCallback[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({
        body,
        signature: String(req.headers['x-prism-signature']),
        event: String(req.headers['x-prism-event']),
      });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
