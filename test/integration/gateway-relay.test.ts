/**
 * The streamed gateway relays an upstream's chunks as the text they arrived in: these tests send chunks shaped as
 * real servers shape them (`"usage": null` on every chunk, spaces after colons, escapes, no `model` at all) and
 * check, with the official `openai` SDK and byte for byte over plain HTTP, that only the model name changes, that
 * usage is stripped when not asked for, and that billing still reads the usage chunk or counts the text.
 */
import OpenAI from 'openai';
import type { ScriptedUpstream } from '../helpers/scripted-upstream';
import type { TestApp } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

const chunk = (fields: Record<string, unknown>): string =>
  JSON.stringify({
    id: 'chatcmpl-up1',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'qwen-7b',
    ...fields,
  });
const choice = (delta: Record<string, unknown>, finish: string | null = null) => ({
  choices: [{ index: 0, delta, finish_reason: finish }],
});

/** The `data:` payloads of an SSE body, `[DONE]` included. */
function dataLines(body: string): string[] {
  return body
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: '))
    .map((frame) => frame.slice('data: '.length));
}

describe('gateway: streamed chunks are relayed as text', () => {
  let lab: UpstreamApp;
  let upstream: ScriptedUpstream;
  let app: TestApp;
  let key: string;
  let client: OpenAI;

  beforeAll(async () => {
    lab = await startUpstreamApp([
      {
        id: 'relay-chat',
        upstreamModel: 'qwen-7b',
        parameters: ['stream', 'stream_options', 'max_tokens'],
        pricing: { prompt: 2.0, completion: 4.0 },
      },
    ]);
    ({ app, upstream } = lab);
    key = await app.createKey('relayers', 'pro');
    await app.container.services.accounts.addCredits('relayers', 5);
    client = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1/compat`, maxRetries: 0 });
  });
  afterAll(() => lab.close());

  const post = (body: Record<string, unknown>) =>
    fetch(`${app.url}/v1/compat/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'relay-chat', messages: [{ role: 'user', content: 'hi' }], ...body }),
    });

  it('changes only the model name of each chunk, byte for byte, and strips "usage": null when usage was not asked for', async () => {
    const spaced =
      '{"id": "chatcmpl-up1", "object": "chat.completion.chunk", "model": "qwen-7b", "choices": [{"index": 0, "delta": {"content": "caf\\u00e9 \\"ok\\""}, "finish_reason": null}], "usage": null}';
    upstream.next({
      kind: 'raw-stream',
      events: [
        chunk({ ...choice({ role: 'assistant', content: '' }), usage: null }),
        spaced,
        chunk({ ...choice({}, 'stop'), usage: null }),
        chunk({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 } }),
      ],
    });
    const res = await post({ stream: true });
    expect(res.status).toBe(200);
    const lines = dataLines(await res.text());
    expect(lines).toEqual([
      chunk(choice({ role: 'assistant', content: '' })).replace('"qwen-7b"', '"relay-chat"'),
      '{"id": "chatcmpl-up1", "object": "chat.completion.chunk", "model": "relay-chat", "choices": [{"index": 0, "delta": {"content": "caf\\u00e9 \\"ok\\""}, "finish_reason": null}]}',
      chunk(choice({}, 'stop')).replace('"qwen-7b"', '"relay-chat"'),
      '[DONE]',
    ]);
  });

  it('bills from the usage chunk and sends it last, with the cost, to an SDK that asked for usage', async () => {
    upstream.next({
      kind: 'raw-stream',
      events: [
        chunk({ ...choice({ role: 'assistant', content: 'Hello' }), usage: null }),
        chunk({ ...choice({ content: ' there' }, 'stop'), usage: null }),
        chunk({ choices: [], usage: { prompt_tokens: 1000, completion_tokens: 2000, total_tokens: 3000 } }),
      ],
    });
    const stream = await client.chat.completions.create({
      model: 'relay-chat',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const part of stream) chunks.push(part);
    expect(chunks.map((c) => c.model)).toEqual(['relay-chat', 'relay-chat', 'relay-chat']);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hello there');
    expect(chunks.slice(0, 2).map((c) => c.usage)).toEqual([null, null]);
    const last = chunks[2] as unknown as { id: string; usage: Record<string, unknown> };
    expect(last.id).toBe('chatcmpl-up1');
    // 1,000 prompt tokens at $2/M and 2,000 completion tokens at $4/M.
    expect(last.usage).toMatchObject({ prompt_tokens: 1000, completion_tokens: 2000, cost: 0.01 });
  });

  it('counts the streamed text for billing when the upstream sends no usage, escapes as one character', async () => {
    // 23 characters once decoded (each escape is one): 6 tokens at four characters a token, rounded up.
    upstream.next({
      kind: 'raw-stream',
      events: [
        chunk(choice({ role: 'assistant', content: 'caf\u00e9 au lait\n' })),
        chunk(choice({ content: 'one more \u00e9' }, 'stop')),
      ],
    });
    const res = await post({ stream: true, stream_options: { include_usage: true } });
    const lines = dataLines(await res.text());
    const usage = JSON.parse(lines[lines.length - 2] as string) as { usage: Record<string, number> };
    expect(usage.usage.completion_tokens).toBe(6);
  });

  it('relabels a chunk that has no model by parsing it, and reports an error event mid-stream as an error frame', async () => {
    upstream.next({
      kind: 'raw-stream',
      events: [
        JSON.stringify({ id: 'x', object: 'chat.completion.chunk', ...choice({ content: 'a' }) }),
        JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } }),
      ],
    });
    const lines = dataLines(await (await post({ stream: true })).text());
    expect(JSON.parse(lines[0] as string)).toMatchObject({ id: 'x', model: 'relay-chat' });
    const failure = JSON.parse(lines[1] as string) as { error: { code: string; message: string } };
    expect(failure.error.code).toBe('upstream_error');
    expect(failure.error.message).toContain('overloaded');
    expect(lines[2]).toBe('[DONE]');
  });

  it('reports an event that is not one JSON object as an error frame rather than relaying it', async () => {
    upstream.next({ kind: 'raw-stream', events: [chunk(choice({ content: 'a' })), '{"truncated": ', ' {"x": 1}'] });
    const lines = dataLines(await (await post({ stream: true })).text());
    expect(JSON.parse(lines[0] as string)).toMatchObject({ model: 'relay-chat' });
    expect(JSON.parse(lines[1] as string)).toMatchObject({ error: { code: 'upstream_error' } });
    expect(lines).toHaveLength(3);
  });
});
