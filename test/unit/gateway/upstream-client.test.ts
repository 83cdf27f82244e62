import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpTransport } from '../../../src/gateway/upstream/http-transport';
import type { UpstreamTarget } from '../../../src/gateway/catalogue/model.types';
import {
  createUpstreamClient,
  type UpstreamJson,
  type UpstreamStream,
} from '../../../src/gateway/upstream/upstream-client';
import { failure } from '../../helpers/app-error';
import { startScriptedUpstream, type ScriptedUpstream } from '../../helpers/scripted-upstream';

let upstream: ScriptedUpstream;
beforeEach(async () => {
  upstream = await startScriptedUpstream();
});
afterEach(async () => {
  await upstream.close();
});

function target(overrides: Partial<UpstreamTarget> = {}): UpstreamTarget {
  return {
    provider: 'vLLM',
    baseUrl: upstream.baseUrl,
    apiKey: 'sk-upstream',
    model: 'qwen-upstream',
    ttftTimeoutMs: 5_000,
    totalTimeoutMs: 10_000,
    ...overrides,
  };
}

const client = createUpstreamClient({ retryBackoffMs: 10 });
const messages = [{ role: 'user', content: 'hi' }];

async function collect(stream: UpstreamStream): Promise<UpstreamJson[]> {
  const out: UpstreamJson[] = [];
  for await (const batch of stream) out.push(...batch);
  return out;
}

/** A loopback upstream answering every request with `handler` once its body is read; counts connections. */
async function rawUpstream(handler: (res: http.ServerResponse, req: http.IncomingMessage) => void) {
  let connections = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(res, req));
  });
  server.on('connection', () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

const contents = (chunks: UpstreamJson[]) =>
  chunks.map((c) => (c.choices as { delta: { content?: string } }[])[0]?.delta.content ?? '').join('');

describe('upstream client: non-streaming', () => {
  it('sends the upstream model name and key, and returns the completion', async () => {
    upstream.next({ kind: 'reply', content: 'Hello there', usage: { prompt_tokens: 5, completion_tokens: 2 } });
    const reply = await client.chat(target(), { model: 'our-alias', messages, stream: true, temperature: 0 });
    expect(reply).toMatchObject({
      object: 'chat.completion',
      choices: [{ message: { content: 'Hello there' } }],
      usage: { total_tokens: 7 },
    });
    const [request] = upstream.requests;
    expect(request?.path).toBe('/v1/chat/completions');
    expect(request?.headers.authorization).toBe('Bearer sk-upstream');
    expect(request?.body).toEqual({ model: 'qwen-upstream', messages, temperature: 0 });
  });

  it('returns tool calls as the upstream sent them', async () => {
    upstream.next({ kind: 'reply', toolCalls: [{ name: 'ocr', arguments: '{"page":1}' }] });
    const reply = await client.chat(target(), { messages });
    expect(reply).toMatchObject({
      choices: [
        {
          finish_reason: 'tool_calls',
          message: {
            tool_calls: [
              { index: 0, id: 'call_0', type: 'function', function: { name: 'ocr', arguments: '{"page":1}' } },
            ],
          },
        },
      ],
    });
  });

  it('calls embeddings', async () => {
    upstream.next({ kind: 'embeddings', dimensions: 4 });
    const reply = await client.embeddings(target(), { model: 'x', input: ['a', 'b'] });
    expect((reply.data as unknown[]).length).toBe(2);
    expect(upstream.requests[0]?.path).toBe('/v1/embeddings');
    expect(upstream.requests[0]?.body.model).toBe('qwen-upstream');
  });

  it('aborts at the total deadline with 504 and the provider in brackets, and the upstream sees the hang-up', async () => {
    upstream.next({ kind: 'hang' });
    const error = await failure(client.chat(target({ totalTimeoutMs: 200 }), { messages }));
    expect(error).toMatchObject({ status: 504, code: 'deadline_exceeded' });
    expect(error.message).toMatch(/^\[vLLM\] /);
    await upstream.requests[0]?.closed;
    expect(upstream.requests[0]?.closedEarly).toBe(true);
  });

  it('cancels the upstream call when the client disconnects', async () => {
    upstream.next({ kind: 'hang' });
    const controller = new AbortController();
    const call = client.chat(target(), { messages }, { signal: controller.signal });
    while (upstream.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    expect(await failure(call)).toMatchObject({ status: 499, code: 'client_disconnected' });
    await upstream.requests[0]?.closed;
    expect(upstream.requests[0]?.closedEarly).toBe(true);
  });
});

describe('upstream client: error mapping and retries', () => {
  it.each([
    [400, 400, 'upstream_rejected'],
    [422, 400, 'upstream_rejected'],
    [401, 502, 'upstream_error'],
    [404, 502, 'upstream_error'],
    [500, 502, 'upstream_error'],
    [429, 503, 'upstream_unavailable'],
  ])('maps upstream %i to %i %s', async (status, ours, code) => {
    upstream.next({ kind: 'error', status, body: { error: { message: 'nope', param: 'temperature' } } });
    const error = await failure(client.chat(target(), { messages }));
    expect(error).toMatchObject({ status: ours, code });
    expect(error.message).toMatch(/^\[vLLM\] .*nope/);
    if (status === 400) expect(error.param).toBe('temperature');
  });

  it('passes the upstream Retry-After on, and reads FastAPI-style details', async () => {
    upstream.next({ kind: 'error', status: 429, headers: { 'retry-after': '7' }, body: { detail: 'slow down' } });
    const error = await failure(client.chat(target(), { messages }));
    expect(error.retryAfterSeconds).toBe(7);
    expect(error.message).toContain('slow down');
  });

  it('retries a 503 once before anything was received, then succeeds', async () => {
    upstream.next({ kind: 'error', status: 503 }, { kind: 'reply', content: 'second time' });
    const reply = await client.chat(target(), { messages });
    expect(reply).toMatchObject({ choices: [{ message: { content: 'second time' } }] });
    expect(upstream.requests).toHaveLength(2);
  });

  it('gives up after the retries with the last error', async () => {
    upstream.next({ kind: 'error', status: 502 }, { kind: 'error', status: 502 }, { kind: 'reply' });
    expect(await failure(client.chat(target(), { messages }))).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(upstream.requests).toHaveLength(2);
  });

  it('reports an unreachable server as 502 with the provider', async () => {
    const closed = await startScriptedUpstream();
    await closed.close();
    const error = await failure(client.chat(target({ baseUrl: closed.baseUrl }), { messages }));
    expect(error).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(error.message).toMatch(/^\[vLLM\] The upstream connection failed/);
  });

  it('turns a reply over the size cap into 502 without retrying it', async () => {
    const capped = createUpstreamClient({
      retryBackoffMs: 10,
      transport: createHttpTransport({ maxBodyBytes: 1_000 }),
    });
    upstream.next({ kind: 'reply', content: 'x'.repeat(2_000) }, { kind: 'reply', content: 'small' });
    const error = await failure(capped.chat(target(), { messages }));
    expect(error).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(error.message).toMatch(/^\[vLLM\] The upstream sent a reply larger than/);
    expect(upstream.requests).toHaveLength(1);
  });

  it('rejects a reply that is not JSON', async () => {
    upstream.next({ kind: 'error', status: 200, body: 'not json' });
    expect(await failure(client.chat(target(), { messages }))).toMatchObject({ status: 502 });
  });
});

describe('upstream client: streaming', () => {
  it('streams chunks, asking for usage, skipping keep-alive comments', async () => {
    upstream.next({
      kind: 'stream',
      chunks: ['Hel', 'lo', ' world'],
      firstChunkDelayMs: 60,
      pingEveryMs: 20,
      usage: { prompt_tokens: 3, completion_tokens: 3 },
    });
    const chunks = await collect(await client.streamChat(target(), { model: 'alias', messages }));
    expect(contents(chunks)).toBe('Hello world');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 3 } });
    expect(upstream.requests[0]?.body).toMatchObject({
      model: 'qwen-upstream',
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('streams tool-call deltas', async () => {
    upstream.next({ kind: 'stream', chunks: [{ toolCalls: [{ name: 'ocr', arguments: '{}' }] }] });
    const chunks = await collect(await client.streamChat(target(), { messages }));
    expect(chunks[0]).toMatchObject({ choices: [{ delta: { tool_calls: [{ function: { name: 'ocr' } }] } }] });
    expect(chunks.at(-2)).toMatchObject({ choices: [{ finish_reason: 'tool_calls' }] });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { total_tokens: 2 } });
  });

  it('fails with 504 ttft_timeout before resolving when the first chunk is late, even with keep-alives', async () => {
    upstream.next({ kind: 'stream', chunks: ['late'], firstChunkDelayMs: 5_000, pingEveryMs: 20 });
    const error = await failure(client.streamChat(target({ ttftTimeoutMs: 200 }), { messages }));
    expect(error).toMatchObject({ status: 504, code: 'ttft_timeout' });
    expect(error.message).toMatch(/^\[vLLM\] .*ttft_timeout_s/);
    await upstream.requests[0]?.closed;
    expect(upstream.requests[0]?.closedEarly).toBe(true);
  });

  it('treats a server that never sends headers as a first-token timeout too', async () => {
    upstream.next({ kind: 'hang' });
    expect(await failure(client.streamChat(target({ ttftTimeoutMs: 150 }), { messages }))).toMatchObject({
      code: 'ttft_timeout',
    });
  });

  it('does not apply the first-token deadline after the first chunk; the total deadline ends the stream', async () => {
    upstream.next({ kind: 'stream', chunks: ['a', 'b', 'c', 'd', 'e', 'f'], chunkDelayMs: 1_000 });
    const stream = await client.streamChat(target({ ttftTimeoutMs: 500, totalTimeoutMs: 300 + 1_000 }), { messages });
    const seen: UpstreamJson[] = [];
    const error = await failure(
      (async () => {
        for await (const batch of stream) seen.push(...batch);
      })(),
    );
    expect(error).toMatchObject({ status: 504, code: 'deadline_exceeded' });
    expect(seen.length).toBeGreaterThanOrEqual(1);
    expect(seen.length).toBeLessThan(6);
    await upstream.requests[0]?.closed;
    expect(upstream.requests[0]?.closedEarly).toBe(true);
  });

  it('cancels the upstream request when the client disconnects before the headers', async () => {
    upstream.next({ kind: 'hang' });
    const controller = new AbortController();
    const call = client.streamChat(target(), { messages }, { signal: controller.signal });
    while (upstream.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    expect(await failure(call)).toMatchObject({ status: 499, code: 'client_disconnected' });
    await upstream.requests[0]?.closed;
    expect(upstream.requests[0]?.closedEarly).toBe(true);
  });

  it('keeps a multi-byte character split across two network reads intact', async () => {
    const frame = Buffer.from(
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'né ✓ 😀' } }] })}\n\n`,
    );
    const cut = frame.indexOf(Buffer.from('😀')) + 2; // inside the 4-byte emoji
    const raw = await rawUpstream((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(frame.subarray(0, cut), () =>
        setTimeout(() => {
          res.write(frame.subarray(cut));
          res.end('data: [DONE]\n\n');
        }, 30),
      );
    });
    try {
      const chunks = await collect(await client.streamChat(target({ baseUrl: raw.baseUrl }), { messages }));
      expect(contents(chunks)).toBe('né ✓ 😀');
    } finally {
      await raw.close();
    }
  });

  it('hands over the chunks of one network read as one batch, and an error event after the chunks before it', async () => {
    const frame = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;
    const raw = await rawUpstream((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(frame('a') + frame('b') + frame('c'), () =>
        setTimeout(() => res.end(frame('d') + 'event: error\ndata: {"error":{"message":"overloaded"}}\n\n'), 30),
      );
    });
    try {
      const stream = await client.streamChat(target({ baseUrl: raw.baseUrl }), { messages });
      const batches: string[] = [];
      const error = await failure(
        (async () => {
          for await (const batch of stream) batches.push(contents(batch));
        })(),
      );
      expect(batches).toEqual(['abc', 'd']);
      expect(error).toMatchObject({ status: 502, code: 'upstream_error' });
      expect((error as Error).message).toContain('overloaded');
    } finally {
      await raw.close();
    }
  });

  it('keeps the upstream connection alive across streamed and plain calls', async () => {
    const raw = await rawUpstream((res, req) => {
      if (req.headers.accept === 'text/event-stream') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'a' } }] })}\n\n`);
        setTimeout(() => res.end('data: [DONE]\n\n'), 5);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"chat.completion"}');
      }
    });
    try {
      // The stream is over for the caller at `[DONE]`; the end of the body follows, and then the socket is free.
      const settle = () => new Promise((r) => setTimeout(r, 30));
      const own = createUpstreamClient();
      for (let i = 0; i < 3; i += 1) {
        expect(contents(await collect(await own.streamChat(target({ baseUrl: raw.baseUrl }), { messages })))).toBe('a');
        await settle();
        await own.chat(target({ baseUrl: raw.baseUrl }), { messages });
        await settle();
      }
      expect(raw.connections()).toBe(1);
    } finally {
      await raw.close();
    }
  });

  it('turns a dropped connection mid-stream into 502 after the chunks that arrived', async () => {
    upstream.next({ kind: 'stream', chunks: ['one', 'two', 'three'], failAfter: 2 });
    const stream = await client.streamChat(target(), { messages });
    const seen: UpstreamJson[] = [];
    const error = await failure(
      (async () => {
        for await (const batch of stream) seen.push(...batch);
      })(),
    );
    expect(contents(seen)).toBe('onetwo');
    expect(error).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(upstream.requests).toHaveLength(1); // never retried once a chunk has arrived
  });

  it('turns an upstream error event into 502 with its message', async () => {
    upstream.next({ kind: 'stream', chunks: ['one', 'two'], failAfter: 1, failWith: 'error-event' });
    const stream = await client.streamChat(target(), { messages });
    const error = await failure(collect(stream));
    expect(error.status).toBe(502);
    expect(error.message).toContain('scripted failure');
  });

  it('maps an HTTP error before the stream like a non-streaming one', async () => {
    upstream.next({ kind: 'error', status: 400, body: { error: { message: 'bad image' } } });
    expect(await failure(client.streamChat(target(), { messages }))).toMatchObject({
      status: 400,
      code: 'upstream_rejected',
    });
  });

  it('stops the upstream when the consumer stops early or the client disconnects', async () => {
    upstream.next({ kind: 'stream', chunks: ['a', 'b', 'c', 'd'], chunkDelayMs: 2_000 });
    const early = await client.streamChat(target(), { messages });
    await early.next();
    await early.return?.();
    await upstream.requests[0]?.closed;
    expect(upstream.requests[0]?.closedEarly).toBe(true);

    upstream.next({ kind: 'stream', chunks: ['a', 'b', 'c', 'd'], chunkDelayMs: 2_000 });
    const controller = new AbortController();
    const stream = await client.streamChat(target(), { messages }, { signal: controller.signal });
    await stream.next();
    const pending = stream.next();
    controller.abort();
    await expect(pending).rejects.toMatchObject({ status: 499, code: 'client_disconnected' });
    await upstream.requests[1]?.closed;
    expect(upstream.requests[1]?.closedEarly).toBe(true);
  });
});
