import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppError } from '../../../src/domain/errors';
import { TtftTimeoutError } from '../../../src/gateway/gateway-errors';
import { readSseEvents } from '../../../src/gateway/upstream/sse-parser';
import { createSseWriter, type SseOutcome, type SseSink } from '../../../src/http/sse';
import type { CancelSignal } from '../../../src/lib/cancel';

/** A loopback server whose single route pipes `source()` through the writer and records the outcome. */
async function serve(source: (signal: CancelSignal) => AsyncIterable<unknown[]>) {
  const outcomes: Promise<SseOutcome | 'json-error' | 'error-after-headers'>[] = [];
  const server = http.createServer((req, res) => {
    const writer = createSseWriter(res, { requestId: 'req_1' });
    outcomes.push(
      writer.pipe(source(writer.signal), { 'x-ratelimit-remaining-requests': '59' }).catch((error: unknown) => {
        // What the error handler does: a JSON error if nothing was sent yet, else drop the connection.
        const e = error as AppError;
        if (res.headersSent) {
          res.destroy();
          return 'error-after-headers' as const;
        }
        res
          .writeHead(e.status, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { code: e.code } }));
        return 'json-error' as const;
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url,
    outcomes,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

async function frames(res: Response): Promise<string[]> {
  const out: string[] = [];
  for await (const event of readSseEvents(res.body as AsyncIterable<Uint8Array>)) out.push(event.data);
  return out;
}

describe('SSE writer', () => {
  it('writes each chunk as a data frame, ends with [DONE], with SSE and caller headers', async () => {
    const app = await serve(async function* () {
      yield [{ n: 1 }];
      yield [{ n: 2 }, { n: 3 }];
    });
    const res = await fetch(app.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('x-ratelimit-remaining-requests')).toBe('59');
    expect(await res.text()).toBe('data: {"n":1}\n\ndata: {"n":2}\n\ndata: {"n":3}\n\ndata: [DONE]\n\n');
    expect(await app.outcomes[0]).toBe('completed');
    await app.close();
  });

  it('writes nothing before the first chunk, so an early failure is still a JSON error with its status', async () => {
    const app = await serve(async function* () {
      yield* [];
      throw new TtftTimeoutError('vLLM', 30);
    });
    const res = await fetch(app.url);
    expect(res.status).toBe(504);
    expect(await res.json()).toEqual({ error: { code: 'ttft_timeout' } });
    expect(await app.outcomes[0]).toBe('json-error');
    await app.close();
  });

  it('turns a failure after the first chunk into an error frame then [DONE], leaking nothing internal', async () => {
    const app = await serve(async function* () {
      yield [{ n: 1 }];
      throw new Error('secret /etc/path detail');
    });
    const res = await fetch(app.url);
    const data = await frames(res);
    expect(data).toHaveLength(3);
    expect(JSON.parse(data[1] ?? '')).toEqual({
      error: {
        message: 'The server had an internal error while processing the request.',
        type: 'internal_server_error',
        code: 'internal_error',
        param: null,
        request_id: 'req_1',
      },
    });
    expect(data[2]).toBe('[DONE]');
    expect(await app.outcomes[0]).toBe('failed');
    await app.close();
  });

  it('renders an AppError mid-stream with its own fields', async () => {
    const app = await serve(async function* () {
      yield [{ n: 1 }];
      throw new AppError(504, { message: '[vLLM] too slow', type: 'timeout_error', code: 'deadline_exceeded' });
    });
    const data = await frames(await fetch(app.url));
    expect(JSON.parse(data[1] ?? '')).toMatchObject({
      error: { code: 'deadline_exceeded', message: '[vLLM] too slow' },
    });
    await app.close();
  });

  it('aborts its signal and closes the source when the client disconnects', async () => {
    let closedSource = false;
    let signalAborted = false;
    const app = await serve(async function* (signal) {
      signal.addEventListener('abort', () => (signalAborted = true));
      try {
        for (let i = 0; ; i += 1) {
          yield [{ i }];
          await new Promise((r) => setTimeout(r, 20));
        }
      } finally {
        closedSource = true;
      }
    });
    const controller = new AbortController();
    const res = await fetch(app.url, { signal: controller.signal });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    controller.abort();
    expect(await app.outcomes[0]).toBe('disconnected');
    expect(signalAborted).toBe(true);
    expect(closedSource).toBe(true);
    await app.close();
  });
});

/** A sink whose socket buffer is full until the test says `drain`. */
class SlowSink extends EventEmitter implements SseSink {
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  destroyed = false;
  written: string[] = [];
  flushes = 0;
  writeHead() {
    this.headersSent = true;
  }
  write(chunk: string) {
    this.written.push(chunk);
    return false;
  }
  end() {
    this.writableEnded = true;
    this.writableFinished = true;
  }
  flush() {
    this.flushes += 1;
  }
}

describe('SSE writer backpressure', () => {
  it('waits for drain before the next frame, flushing each one', async () => {
    const sink = new SlowSink();
    const writer = createSseWriter(sink);
    let sent = false;
    const first = writer.send({ a: 1 }).then((ok) => (sent = ok));
    await new Promise((r) => setImmediate(r));
    expect(sent).toBe(false);
    expect(sink.flushes).toBe(1);
    sink.emit('drain');
    await first;
    expect(sent).toBe(true);
  });

  it('stops waiting, and reports the client gone, when the connection closes instead', async () => {
    const sink = new SlowSink();
    const writer = createSseWriter(sink);
    const pending = writer.send({ a: 1 });
    sink.destroyed = true;
    sink.emit('close');
    expect(await pending).toBe(false);
    expect(writer.signal.aborted).toBe(true);
  });
});
