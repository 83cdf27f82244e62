/**
 * The OpenAI-compatible gateway through the official `openai` SDK and raw HTTP: model listing, chat completions on
 * an upstream (a scripted OpenAI-compatible server on loopback) and on the embedded engines, streaming, deadlines,
 * capability checks, billing, rate limits and client disconnects.
 */
import OpenAI from 'openai';
import { renderReceiptImage } from '../helpers/media-fixtures';
import type { ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, startTestApp, type TestApp } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

describe('gateway', () => {
  let lab: UpstreamApp;
  let upstream: ScriptedUpstream;
  let app: TestApp;
  let key: string;
  let client: OpenAI;

  beforeAll(async () => {
    const chatParameters = ['max_tokens', 'temperature', 'stream', 'stream_options', 'response_format'];
    lab = await startUpstreamApp(
      [
        {
          id: 'lab-chat',
          upstreamModel: 'qwen-7b',
          parameters: chatParameters,
          pricing: { prompt: 2.0, completion: 4.0 },
          more: { aliases: ['lab'], ttft_timeout_s: 0.3, total_timeout_s: 3 },
        },
        {
          id: 'lab-vl',
          upstreamModel: 'qwen-vl',
          capabilities: { supported_input_types: ['text', 'image'], json_schema: true, max_images: 4 },
          parameters: chatParameters,
        },
        { id: 'cold-chat', upstreamModel: 'cold', capabilities: null, more: { serving: false } },
      ],
      { apiKeyEnv: 'LAB_KEY', provider: 'vLLM', env: { LAB_KEY: 'sk-lab-secret' } },
    );
    ({ app, upstream } = lab);
    key = await app.createKey('builders', 'pro');
    await app.container.services.accounts.addCredits('builders', 5);
    client = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1/compat`, maxRetries: 0 });
  });
  afterAll(() => lab.close());

  it('lists models with capabilities and pricing, and 404s unknown ones', async () => {
    const ids = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toEqual(expect.arrayContaining(['prism-1', 'prism-orion-1', 'lab-chat', 'lab-vl']));
    const lab = (await client.models.retrieve('lab-chat')) as unknown as Record<string, unknown>;
    expect(lab).toMatchObject({
      id: 'lab-chat',
      object: 'model',
      pricing: { prompt: 2, completion: 4 },
      capabilities: { supported_input_types: ['text'] },
    });
    await expect(client.models.retrieve('no-such-model')).rejects.toMatchObject({ status: 404 });
    const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1/openai`, maxRetries: 0 });
    expect((await openai.models.retrieve('lab')).id).toBe('lab-chat');
  });

  it('routes a chat completion to the upstream, with its key and model name, and bills the wallet', async () => {
    upstream.next({
      kind: 'reply',
      content: 'Hello from the lab',
      usage: { prompt_tokens: 1000, completion_tokens: 500 },
    });
    const before = await app.container.stores.wallets.balance(
      (await app.container.stores.accounts.findOrg('builders'))!.id,
    );
    const reply = await client.chat.completions.create({
      model: 'lab-chat',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(reply.choices[0]?.message.content).toBe('Hello from the lab');
    expect(reply.model).toBe('lab-chat');
    expect(reply.usage).toMatchObject({ prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 });
    const seen = upstream.requests.at(-1);
    expect(seen?.body.model).toBe('qwen-7b');
    expect(seen?.headers.authorization).toBe('Bearer sk-lab-secret');
    const after = await app.container.stores.wallets.balance(
      (await app.container.stores.accounts.findOrg('builders'))!.id,
    );
    // 1000 prompt tokens at $2/M + 500 completion tokens at $4/M = $0.004
    expect(before - after).toBe(4000);
  });

  it('streams with the SDK iterator and reports usage when asked', async () => {
    upstream.next({
      kind: 'stream',
      chunks: ['Once ', 'upon ', 'a time'],
      usage: { prompt_tokens: 10, completion_tokens: 3 },
    });
    const stream = await client.chat.completions.create({
      model: 'lab-chat',
      messages: [{ role: 'user', content: 'tell me a story' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: unknown = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Once upon a time');
    expect(usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 });
  });

  it('answers 504 ttft_timeout before any byte when the first token is late, naming the provider', async () => {
    upstream.next({ kind: 'stream', chunks: ['late'], firstChunkDelayMs: 2000 });
    const res = await call(`${app.url}/v1/compat/chat/completions`, {
      key,
      json: { model: 'lab-chat', messages: [{ role: 'user', content: 'x' }], stream: true },
    });
    expect(res.status).toBe(504);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('ttft_timeout');
    expect(body.error.message).toMatch(/^\[vLLM\]/);
  });

  it('turns a failure after the first chunk into an error frame the SDK raises', async () => {
    upstream.next({ kind: 'stream', chunks: ['part one ', 'part two'], failAfter: 1, failWith: 'disconnect' });
    const stream = await client.chat.completions.create({
      model: 'lab-chat',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    const received: string[] = [];
    await expect(
      (async () => {
        for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '');
      })(),
    ).rejects.toMatchObject({ error: { code: 'upstream_error' } });
    expect(received.join('')).toContain('part one');
  });

  it('refuses what a model cannot do, naming the parameter or content path', async () => {
    const image = await call(`${app.url}/v1/compat/chat/completions`, {
      key,
      json: {
        model: 'lab-chat',
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }],
      },
    });
    expect(image.status).toBe(400);
    expect(await image.json()).toMatchObject({
      detail: { error: { code: 'capability_violation', param: 'messages.content.image_url' } },
    });
    const param = await call(`${app.url}/v1/compat/chat/completions`, {
      key,
      json: { model: 'lab-chat', messages: [{ role: 'user', content: 'x' }], video_fps: 2 },
    });
    expect(await param.json()).toMatchObject({
      detail: { error: { code: 'capability_violation', param: 'video_fps' } },
    });
    const missing = await call(`${app.url}/v1/compat/chat/completions`, { key, json: { model: 'lab-chat' } });
    expect(missing.status).toBe(422);
    expect(await missing.json()).toMatchObject({ detail: [{ type: 'missing', loc: ['body', 'messages'] }] });
    const cold = await call(`${app.url}/v1/compat/chat/completions`, {
      key,
      json: { model: 'cold-chat', messages: [{ role: 'user', content: 'x' }] },
    });
    expect(cold.status).toBe(503);
    expect(cold.headers.get('retry-after')).toBe('30');
  });

  it('reads an image with prism-1 methods, streamed or not', async () => {
    const url = `data:image/png;base64,${renderReceiptImage().toString('base64')}`;
    const messages = [{ role: 'user' as const, content: [{ type: 'image_url' as const, image_url: { url } }] }];
    const reply = await client.chat.completions.create({ model: 'prism-1', messages, method: 'ocr' } as never);
    const typed = JSON.parse((reply as OpenAI.ChatCompletion).choices[0]?.message.content ?? '{}') as Record<
      string,
      unknown
    >;
    expect(typed).toMatchObject({ model: 'prism-1', method: 'ocr', type: 'image.ocr.image', image_width: 1000 });
    expect(String(typed.content)).toMatch(/TOTAL\s+26\.22/);

    const stream = await client.chat.completions.create({
      model: 'prism-1',
      messages,
      stream: true,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'r', schema: { type: 'object', properties: { total: { type: 'number' } } } },
      },
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(JSON.parse(text)).toEqual({ total: 26.22 });
  });

  it('holds a structured model to one input, json_schema to models that enforce it, and frames to the limit', async () => {
    const url = `data:image/png;base64,${renderReceiptImage().toString('base64')}`;
    const two = await call(`${app.url}/v1/compat/chat/completions`, {
      key,
      json: {
        model: 'prism-1',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image_url', image_url: { url } },
              { type: 'image_url', image_url: { url } },
            ],
          },
        ],
      },
    });
    expect(two.status).toBe(400);
    const schema = await call(`${app.url}/v1/compat/chat/completions`, {
      key,
      json: {
        model: 'lab-chat',
        messages: [{ role: 'user', content: 'x' }],
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
      },
    });
    expect(await schema.json()).toMatchObject({
      detail: { error: { code: 'capability_violation', param: 'response_format' } },
    });
    upstream.next({ kind: 'reply', content: '{"ok":true}' });
    const jsonObject = await call(`${app.url}/v1/compat/chat/completions`, {
      key,
      json: { model: 'lab-chat', messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_object' } },
    });
    expect(jsonObject.status).toBe(201);
    const frames = await call(`${app.url}/v1/compat/chat/completions`, {
      key,
      json: { model: 'prism-1', messages: [{ role: 'user', content: 'x' }], video_max_frames: 5000 },
    });
    expect(frames.status).toBe(400);
    expect(await frames.json()).toMatchObject({ detail: { error: { param: 'video_max_frames' } } });
  });

  it('bills at least $0.001 a call and accounts reasoning tokens by effort', async () => {
    const orgId = (await app.container.stores.accounts.findOrg('builders'))!.id;
    const before = await app.container.stores.wallets.balance(orgId);
    const reply = await client.chat.completions.create({
      model: 'prism-orion-1',
      messages: [{ role: 'user', content: 'hi' }],
      reasoning_effort: 'low',
    } as never);
    expect((reply as OpenAI.ChatCompletion).usage?.completion_tokens_details?.reasoning_tokens).toBe(64);
    expect(before - (await app.container.stores.wallets.balance(orgId))).toBe(1000);
    const bad = await call(`${app.url}/v1/compat/chat/completions`, {
      key,
      json: { model: 'prism-orion-1', messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'high' },
    });
    expect(bad.status).toBe(422);
  });

  it('refuses callers with an empty wallet with 402 and lets anonymous guests use local models', async () => {
    const broke = await app.createKey('broke-org');
    const brokeClient = new OpenAI({ apiKey: broke, baseURL: `${app.url}/v1/compat`, maxRetries: 0 });
    await expect(
      brokeClient.chat.completions.create({ model: 'prism-orion-1', messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toMatchObject({ status: 402 });
    const guest = await call(`${app.url}/v1/compat/chat/completions`, {
      json: { model: 'prism-orion-1', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(guest.status).toBe(201);
    expect(((await guest.json()) as OpenAI.ChatCompletion).choices[0]?.message.content).toMatch(
      /No upstream language model/,
    );
  });

  it('embeds text with the SDK (base64 by default), in float, and at shorter Matryoshka lengths', async () => {
    const sdk = await client.embeddings.create({
      model: 'prism-embed-text-1',
      input: ['The invoice total is due on Friday', 'Payment of the bill is expected at the end of the week'],
    });
    expect(sdk.data).toHaveLength(2);
    const [a, b] = sdk.data.map((d) => d.embedding);
    expect(a).toHaveLength(768);
    const norm = Math.sqrt((a ?? []).reduce((sum, v) => sum + v * v, 0));
    expect(norm).toBeCloseTo(1, 3);
    expect(sdk.model).toBe('prism-embed-text-1:text');
    expect(sdk.usage.prompt_tokens).toBeGreaterThan(0);

    const float = await client.embeddings.create({
      model: 'prism-embed-text-1',
      input: 'The invoice total is due on Friday',
      encoding_format: 'float',
      dimensions: 256,
    });
    const short = float.data[0]?.embedding ?? [];
    expect(short).toHaveLength(256);
    expect(Math.sqrt(short.reduce((sum, v) => sum + v * v, 0))).toBeCloseTo(1, 3);
    expect(b).toHaveLength(768);

    const image = `data:image/png;base64,${renderReceiptImage().toString('base64')}`;
    const mm = await client.embeddings.create({
      model: 'prism-embed-mm-1',
      input: [[{ type: 'image_url', image_url: { url: image } }]] as never,
      encoding_format: 'float',
    });
    expect(mm.data[0]?.embedding).toHaveLength(2048);
  });

  it('refuses bad embedding requests the way the spec says', async () => {
    const missing = await call(`${app.url}/v1/compat/embeddings`, { key, json: { model: 'prism-embed-text-1' } });
    expect(missing.status).toBe(422);
    expect(await missing.json()).toMatchObject({ detail: [{ type: 'missing', loc: ['body', 'input'] }] });
    const prompt = await call(`${app.url}/v1/compat/embeddings`, {
      key,
      json: { model: 'prism-embed-text-1', input: 'x', prompt_name: 'Poetry' },
    });
    expect(prompt.status).toBe(400);
    expect(await prompt.json()).toMatchObject({ detail: { error: { param: 'prompt_name' } } });
    const image = await call(`${app.url}/v1/compat/embeddings`, {
      key,
      json: {
        model: 'prism-embed-text-1',
        input: [{ type: 'image_url', image_url: { url: 'https://example.com/x.png' } }],
      },
    });
    expect(await image.json()).toMatchObject({
      detail: { error: { code: 'capability_violation', param: 'input.image_url' } },
    });
    const dims = await call(`${app.url}/v1/compat/embeddings`, {
      key,
      json: { model: 'prism-embed-text-1', input: 'x', dimensions: 300 },
    });
    expect(await dims.json()).toMatchObject({
      detail: { error: { code: 'capability_violation', param: 'dimensions' } },
    });
  });

  it('runs generate requests that name an upstream VLM there, image and schema included', async () => {
    upstream.next({ kind: 'reply', content: '{"total": 26.22, "company": "GREENLEAF GROCERY LTD"}' });
    const res = await call(`${app.url}/v1/image/generate`, {
      key,
      json: {
        model: 'lab-vl',
        images: [`data:image/png;base64,${renderReceiptImage().toString('base64')}`],
        config: {
          json_schema: { type: 'object', properties: { total: { type: 'number' }, company: { type: 'string' } } },
        },
      },
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({
      status: 'completed',
      model: 'lab-vl',
      response: { total: 26.22, company: 'GREENLEAF GROCERY LTD' },
    });
    const sent = upstream.requests.at(-1)?.body as {
      model: string;
      messages: { content: { type: string }[] }[];
      response_format: { type: string };
    };
    expect(sent.model).toBe('qwen-vl');
    expect(sent.messages[0]?.content.map((p) => p.type)).toEqual(['text', 'image_url']);
    expect(sent.response_format.type).toBe('json_schema');
  });

  it('cancels the upstream call when the client goes away', async () => {
    upstream.next({ kind: 'stream', chunks: ['a', 'b', 'c', 'd', 'e', 'f'], chunkDelayMs: 200 });
    const controller = new AbortController();
    const res = await fetch(`${app.url}/v1/compat/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'lab-chat', messages: [{ role: 'user', content: 'x' }], stream: true }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    const seen = upstream.requests.at(-1);
    await seen?.closed;
    expect(seen?.closedEarly).toBe(true);
  });
});

describe('gateway guest spend', () => {
  it('caps what an anonymous guest may spend per day, by IP and by browser fingerprint', async () => {
    const app = await startTestApp({ PRISM_GUEST_DAILY_CAP_USD: '0.002' });
    try {
      const chat = (fingerprint?: string) =>
        call(`${app.url}/v1/compat/chat/completions`, {
          json: { model: 'prism-orion-1', messages: [{ role: 'user', content: 'hi' }] },
          ...(fingerprint ? { headers: { 'x-prism-fingerprint': fingerprint } } : {}),
        });
      expect((await chat('browser-1')).status).toBe(201);
      expect((await chat('browser-1')).status).toBe(201);
      const over = await chat('browser-1');
      expect(over.status).toBe(402);
      expect(await over.json()).toMatchObject({ detail: { error: { code: 'guest_spend_cap' } } });
      expect(over.headers.get('x-prism-upgrade')).toBeTruthy();
    } finally {
      await app.close();
    }
  });
});

describe('gateway rate limits', () => {
  it('answers 429 with the window, tier and Retry-After once a caller used its budget', async () => {
    const app = await startTestApp({ PRISM_RATE_LIMIT_PER_MINUTE: '2' });
    try {
      const key = await app.createKey('busy', 'pro');
      const list = () => call(`${app.url}/v1/compat/models`, { key });
      expect((await list()).status).toBe(200);
      const second = await list();
      expect(second.headers.get('x-ratelimit-remaining-requests') ?? second.headers.get('x-ratelimit-remaining')).toBe(
        '0',
      );
      const third = await list();
      expect(third.status).toBe(429);
      // Retry-After names the moment the minute window resets, as x-ratelimit-reset-requests does.
      const retryAfter = Number(third.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(third.headers.get('x-ratelimit-reset-requests')).toBe(`${retryAfter}s`);
      expect(await third.json()).toMatchObject({
        error: { type: 'rate_limit_exceeded', message: 'Rate limit exceeded: 2 per 1 minute', tier: 'pro' },
      });
      const anonymous = async () => call(`${app.url}/v1/compat/models`);
      await anonymous();
      await anonymous();
      const blocked = await anonymous();
      expect(blocked.status).toBe(429);
      expect(blocked.headers.get('x-prism-upgrade')).toBeTruthy();
    } finally {
      await app.close();
    }
  });
});
