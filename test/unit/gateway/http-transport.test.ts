import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import {
  createHttpTransport,
  ResponseTooLargeError,
  type UpstreamResponse,
} from '../../../src/gateway/upstream/http-transport';

/** A loopback server answering every request with `handler`; counts connections and records requests. */
async function serve(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const seen: { headers: http.IncomingHttpHeaders; body: string; closedEarly: Promise<boolean> }[] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const closedEarly = new Promise<boolean>((resolve) => res.on('close', () => resolve(!res.writableFinished)));
      seen.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), closedEarly });
      handler(req, res);
    });
  });
  server.on('connection', () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`),
    seen,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

const post = (body = '{"a":1}', signal?: AbortSignal) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'application/json' },
  body,
  ...(signal && { signal }),
});

async function rejection(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e as Error,
  );
}

let app: Awaited<ReturnType<typeof serve>> | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('http transport', () => {
  it('sends the body with Content-Length and returns status, node headers and the whole body as a Buffer', async () => {
    app = await serve((_req, res) => {
      res.writeHead(201, { 'content-type': 'application/json', 'retry-after': '3' });
      res.write('{"x":');
      res.end('"é"}');
    });
    const transport = createHttpTransport();
    const res = await transport(app.url, post('{"ü":1}'));
    expect(res.status).toBe(201);
    expect(res.headers['retry-after']).toBe('3');
    expect(Buffer.isBuffer(res.body)).toBe(true);
    expect(res.body?.toString('utf8')).toBe('{"x":"é"}');
    expect(app.seen[0]?.headers['content-length']).toBe(String(Buffer.byteLength('{"ü":1}')));
    expect(app.seen[0]?.headers['transfer-encoding']).toBeUndefined();
    expect(app.seen[0]?.body).toBe('{"ü":1}');
  });

  it('hands over a 2xx event stream as the response stream, and reads an error answer whole', async () => {
    let status = 200;
    app = await serve((_req, res) => {
      res.writeHead(status, { 'content-type': 'text/event-stream; charset=utf-8' });
      res.end('data: 1\n\n');
    });
    const transport = createHttpTransport();
    const ok = await transport(app.url, post());
    expect(ok.body).toBeUndefined();
    expect(ok.stream).toBeInstanceOf(Readable);
    ok.stream?.setEncoding('utf8');
    let text = '';
    for await (const chunk of ok.stream ?? []) text += chunk as string;
    expect(text).toBe('data: 1\n\n');

    status = 503;
    const failed = await transport(app.url, post());
    expect(failed.stream).toBeUndefined();
    expect(failed.body?.toString('utf8')).toBe('data: 1\n\n');
  });

  it('tells onFirstStreamBytes once, when the first body bytes of an event stream arrive (not for a whole reply)', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let status = 200;
    app = await serve((_req, res) => {
      res.writeHead(status, { 'content-type': 'text/event-stream' });
      if (status !== 200) {
        res.end('data: no\n\n');
        return;
      }
      res.flushHeaders();
      void held.then(() => {
        res.write('data: 1\n\n');
        setTimeout(() => res.end('data: 2\n\n'), 5);
      });
    });
    const transport = createHttpTransport();
    let told = 0;
    const response = await transport(app.url, { ...post(), onFirstStreamBytes: () => (told += 1) });
    expect(told).toBe(0); // headers only so far
    release();
    response.stream?.setEncoding('utf8');
    let text = '';
    for await (const chunk of response.stream ?? []) text += chunk as string;
    expect(text).toBe('data: 1\n\ndata: 2\n\n');
    expect(told).toBe(1);

    status = 503;
    await transport(app.url, { ...post(), onFirstStreamBytes: () => (told += 1) });
    expect(told).toBe(1);
  });

  it('keeps connections alive between calls', async () => {
    app = await serve((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    const transport = createHttpTransport();
    for (let i = 0; i < 3; i += 1) {
      await transport(app.url, post());
      // undici frees the connection just after the reply's last event; a real next call comes later than this.
      await new Promise((r) => setImmediate(r));
    }
    expect(app.connections()).toBe(1);
  });

  it('rejects a reply over the size cap, declared or chunked, and hangs up', async () => {
    const big = 'x'.repeat(4_000);
    app = await serve((req, res) => {
      if (req.headers['x-chunked']) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(big.slice(0, 3_500));
        setTimeout(() => res.end(big.slice(3_500)), 200);
      } else {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': big.length }).end(big);
      }
    });
    const transport = createHttpTransport({ maxBodyBytes: 3_000 });
    const declared = await rejection(transport(app.url, post()));
    expect(declared).toBeInstanceOf(ResponseTooLargeError);
    expect((declared as ResponseTooLargeError).limitBytes).toBe(3_000);
    const chunked = await rejection(
      transport(app.url, { ...post(), headers: { ...post().headers, 'x-chunked': '1' } }),
    );
    expect(chunked).toBeInstanceOf(ResponseTooLargeError);
    expect(await app.seen[1]?.closedEarly).toBe(true);
    // Exactly at the cap is fine.
    const atCap = createHttpTransport({ maxBodyBytes: 4_000 });
    expect((await atCap(app.url, post())).body?.length).toBe(4_000);
  });

  it('rejects a reply cut short', async () => {
    app = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 100 });
      res.write('{"partial":', () => setTimeout(() => res.socket?.destroy(), 10));
    });
    expect(await rejection(createHttpTransport()(app.url, post()))).toMatchObject({ code: 'UND_ERR_SOCKET' });
  });

  it('aborting while waiting for the headers cancels the request', async () => {
    app = await serve(() => undefined); // never answers
    const controller = new AbortController();
    const call = createHttpTransport()(app.url, post('{}', controller.signal));
    while (app.seen.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    expect((await rejection(call)).name).toBe('AbortError');
    expect(await app.seen[0]?.closedEarly).toBe(true);
  });

  it('aborting mid-stream destroys the response stream and the connection', async () => {
    app = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: 1\n\n');
    });
    const controller = new AbortController();
    const res: UpstreamResponse = await createHttpTransport()(app.url, post('{}', controller.signal));
    const reading = (async () => {
      for await (const _chunk of res.stream ?? []) controller.abort();
    })();
    expect((await rejection(reading)).name).toBe('AbortError');
    expect(res.stream?.destroyed).toBe(true);
    expect(await app.seen[0]?.closedEarly).toBe(true);
  });

  it('feeds an event stream with backpressure: a slow reader gets every byte, in order', async () => {
    const events = Array.from({ length: 2_000 }, (_, i) => `data: ${String(i).padStart(6, '0')}${'x'.repeat(500)}\n\n`);
    app = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let i = 0;
      const pump = (): void => {
        while (i < events.length) {
          if (!res.write(events[i++])) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
    });
    const res = await createHttpTransport()(app.url, post());
    let text = '';
    let reads = 0;
    for await (const chunk of res.stream ?? []) {
      text += (chunk as Buffer).toString('utf8');
      reads += 1;
      // Slower than the server: the transport must hold the connection back rather than buffer without bound.
      if (reads % 8 === 0) await new Promise((r) => setTimeout(r, 1));
      expect(res.stream?.readableLength ?? 0).toBeLessThanOrEqual(64 * 1024);
    }
    expect(text).toBe(events.join(''));
  });

  it('destroying the response stream cancels the request', async () => {
    app = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: 1\n\n');
    });
    const res = await createHttpTransport()(app.url, post());
    res.stream?.destroy();
    expect(await app.seen[0]?.closedEarly).toBe(true);
  });

  it('does not send anything when the signal is already aborted', async () => {
    app = await serve((_req, res) => res.end('{}'));
    const controller = new AbortController();
    controller.abort();
    expect((await rejection(createHttpTransport()(app.url, post('{}', controller.signal)))).name).toBe('AbortError');
    await new Promise((r) => setTimeout(r, 20));
    expect(app.seen).toHaveLength(0);
  });
});
