/**
 * A bare reverse proxy (node:http server + keep-alive http.request, no auth, limits or billing) as its own process:
 * the gateway benchmark's reference for what one extra HTTP hop costs on this machine. First stdout line: its URL.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const upstream = new URL(`${process.argv[2] ?? ''}/chat/completions`);
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    body.model = body.model === 'bench-slow' ? 'bench-upstream-slow' : 'bench-upstream';
    const payload = JSON.stringify(body);
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
  });
});
server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
