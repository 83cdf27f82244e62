/**
 * A bare reverse proxy (node:http server, no auth, limits or billing) as its own process: the gateway benchmark's
 * reference for what one extra HTTP hop costs on this machine. `argv[3]` picks its upstream client: `http`
 * (keep-alive `http.request`: what a hand-written node proxy does) or `undici` (the dispatcher the gateway's
 * transport uses), so the gateway's own work can be told apart from its client's. Both pipe the reply through.
 * First stdout line: its URL.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';

const upstream = new URL(`${process.argv[2] ?? ''}/chat/completions`);
const client = process.argv[3] === 'undici' ? 'undici' : 'http';
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const dispatcher = new Agent({ connections: 256, headersTimeout: 0, bodyTimeout: 0 });
const JSON_HEADERS = { 'content-type': 'application/json' };

function forwardWithHttp(payload: string, res: http.ServerResponse): void {
  const out = http.request(
    upstream,
    {
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
    },
    (up) => {
      res.writeHead(up.statusCode ?? 502, { 'content-type': up.headers['content-type'] ?? 'application/json' });
      up.pipe(res);
    },
  );
  out.on('error', () => res.destroy());
  out.end(payload);
}

function forwardWithUndici(payload: string, res: http.ServerResponse): void {
  dispatcher
    .request({ origin: upstream.origin, path: upstream.pathname, method: 'POST', headers: JSON_HEADERS, body: payload })
    .then((up) => {
      const type = up.headers['content-type'];
      res.writeHead(up.statusCode, { 'content-type': typeof type === 'string' ? type : 'application/json' });
      up.body.pipe(res);
    })
    .catch(() => res.destroy());
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    body.model = body.model === 'bench-slow' ? 'bench-upstream-slow' : 'bench-upstream';
    const payload = JSON.stringify(body);
    if (client === 'undici') forwardWithUndici(payload, res);
    else forwardWithHttp(payload, res);
  });
});
server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
