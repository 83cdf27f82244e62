/**
 * Memory held by a few callers is bounded: on /mcp, a caller without a key sends at most 1 MiB, a
 * JSON-RPC batch is at most 32 messages, a body's
 * bytes are reserved against the caller's in-flight budget before it is parsed (a second large body while one is
 * still arriving is a 429 `queue_full`), prompt arguments are short and every `prompts/get` counts against the
 * caller's rate limit; on the decision stream, a message far above the frame limit closes the socket (1009) long
 * before 64 MiB, and one caller cannot hold more than six streams.
 */
import http from 'node:http';
import { connectMcp } from '../helpers/mcp-client';
import { connectStream, streamUrl, type StreamClient } from '../helpers/decision-client';
import { call, startTestApp, type TestApp } from '../helpers/test-app';
import WebSocket from 'ws';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

const promptGet = (id: number, image = 'https://example.com/r.png') => ({
  jsonrpc: '2.0',
  id,
  method: 'prompts/get',
  params: { name: 'receipt', arguments: { image } },
});

describe('memory bounds', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({
      PRISM_DECISION_FRAME_BYTES: String(512 * 1024),
      PRISM_MCP_MAX_JSON_BYTES: String(4 << 20),
    });
  });
  afterAll(() => app.close());

  it('refuses a JSON-RPC batch of more than 32 messages before serving any of it', async () => {
    const key = await app.createKey('batch-org');
    const res = await call(`${app.url}/mcp`, {
      key,
      headers: MCP_HEADERS,
      json: Array.from({ length: 100 }, (_, i) => promptGet(i + 1)),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/at most 32 messages; this one has 100/);
  });

  it('takes at most 1 MiB from a caller without a key (hub tools only), the media-sized limit with one', async () => {
    const body = { jsonrpc: '2.0', id: 1, method: 'prompts/list', params: { pad: 'x'.repeat(2 << 20) } };
    // The anonymous sentinel (a request with no header at all is challenged for OAuth instead).
    const anonymous = await call(`${app.url}/mcp`, {
      headers: { ...MCP_HEADERS, authorization: 'Bearer prism' },
      json: body,
    });
    expect(anonymous.status).toBe(413);
    expect(((await anonymous.json()) as { error: { message: string } }).error.message).toMatch(/limit of 1 MiB/);
    const key = await app.createKey('big-body-org');
    const keyed = await call(`${app.url}/mcp`, { key, headers: MCP_HEADERS, json: body });
    expect(keyed.status).toBe(200);
    await keyed.text();
  });

  it('refuses a prompt argument that carries bytes instead of a reference (MCP SDK client)', async () => {
    const client = await connectMcp(app.url, 'Bearer prism');
    try {
      await expect(
        client.getPrompt({ name: 'receipt', arguments: { image: `data:image/png;base64,${'A'.repeat(600_000)}` } }),
      ).rejects.toThrow(/longer than 8192 characters: pass a URL or a file id/);
      const fine = await client.getPrompt({ name: 'receipt', arguments: { image: 'https://example.com/r.png' } });
      expect(fine.messages).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it("counts prompts/get against the caller's rate limit", async () => {
    const key = await app.createKey('prompt-rate-org');
    // Free tier: 60 a minute. Two batches of 32 prompts use them up; the rest of the second batch is refused.
    const batch = (from: number) => Array.from({ length: 32 }, (_, i) => promptGet(from + i));
    const first = await call(`${app.url}/mcp`, { key, headers: MCP_HEADERS, json: batch(1) });
    expect(first.status).toBe(200);
    await first.text();
    const second = await call(`${app.url}/mcp`, { key, headers: MCP_HEADERS, json: batch(100) });
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).not.toBeNull();
  });

  it("holds one caller's second large body while the first is still arriving (429 queue_full), then lets it in", async () => {
    const key = await app.createKey('bytes-org');
    const size = 3 << 20;
    const slow = http.request(`${app.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${key}`, 'content-length': String(size) },
    });
    slow.on('error', () => undefined);
    const slowAnswer = new Promise<number>((resolve) =>
      slow.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }),
    );
    slow.write(Buffer.alloc(64 * 1024, 0x20));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const second = await call(`${app.url}/mcp`, {
      key,
      headers: MCP_HEADERS,
      json: { jsonrpc: '2.0', id: 1, method: 'prompts/list', params: { pad: 'x'.repeat(2 << 20) } },
    });
    expect(second.status).toBe(429);
    expect(((await second.json()) as { error: { data: { code: string } } }).error.data.code).toBe('queue_full');
    // Another caller is not held up by this one.
    const other = await app.createKey('bytes-other-org');
    const list = await call(`${app.url}/mcp`, {
      key: other,
      headers: MCP_HEADERS,
      json: { jsonrpc: '2.0', id: 1, method: 'prompts/list' },
    });
    expect(list.status).toBe(200);
    await list.text();
    // The first body ends (not JSON-RPC: a 400), its bytes are given back, and the same large body is let in.
    slow.end(Buffer.alloc(size - 64 * 1024, 0x20));
    expect(await slowAnswer).toBeGreaterThanOrEqual(400);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const again = await call(`${app.url}/mcp`, {
      key,
      headers: MCP_HEADERS,
      json: { jsonrpc: '2.0', id: 1, method: 'prompts/list', params: { pad: 'x'.repeat(2 << 20) } },
    });
    expect(again.status).not.toBe(429);
    await again.text();
  });

  it('closes a decision socket whose message is far over the frame limit (1009), without waiting for 64 MiB', async () => {
    const key = await app.createKey('ws-org');
    const ws = new WebSocket(streamUrl(app.url), { headers: { authorization: `Bearer ${key}` } });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    ws.on('error', () => undefined);
    // One 2 MiB fragment of a message that never ends: four times the frame limit.
    ws.send(Buffer.alloc(2 << 20, 1), { binary: true, fin: false });
    expect(await closed).toBe(1009);
  });

  it('lets one caller hold at most six decision streams; a closed one frees its place', async () => {
    const key = await app.createKey('ws-many-org');
    const open: StreamClient[] = [];
    try {
      for (let i = 0; i < 6; i += 1) open.push(await connectStream(app.url, key));
      const refused = await connectStream(app.url, key).then(
        () => null,
        (error: { status?: number; body?: string }) => error,
      );
      expect(refused?.status).toBe(429);
      expect(refused?.body).toMatch(/At most 6 decision streams per caller/);
      await open.shift()?.close();
      await new Promise((resolve) => setTimeout(resolve, 100));
      open.push(await connectStream(app.url, key));
    } finally {
      await Promise.all(open.map((c) => c.close()));
    }
  });
});
