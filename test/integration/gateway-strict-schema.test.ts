/**
 * Structured replies are checked (issue #41 item 5): a caller that asks an upstream model for a strict
 * `json_schema` reply through the official `openai` SDK gets a reply that parses and matches the schema, or a 502
 * `upstream_schema_violation` — never an invalid reply passed on as valid. The upstream is a scripted
 * OpenAI-compatible server on loopback; each case checks what the upstream was sent (the retry carries the
 * problems) and what the wallet was charged (both calls when the retry succeeds, nothing on a 502).
 */
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import type { ScriptedUpstream } from '../helpers/scripted-upstream';
import type { TestApp } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

const INVOICE_SCHEMA = {
  type: 'object',
  properties: {
    invoice_number: { type: 'string' },
    total: { type: 'number' },
  },
  required: ['invoice_number', 'total'],
  additionalProperties: false,
};

const strictFormat = {
  type: 'json_schema' as const,
  json_schema: { name: 'invoice', strict: true, schema: INVOICE_SCHEMA },
};

const VALID = JSON.stringify({ invoice_number: 'INV-7', total: 12.5 });
const WRONG_TYPE = JSON.stringify({ invoice_number: 'INV-7', total: 'twelve' });

describe('gateway: strict json_schema replies are checked', () => {
  let lab: UpstreamApp;
  let upstream: ScriptedUpstream;
  let app: TestApp;
  let key: string;
  let client: OpenAI;
  let orgId: string;

  beforeAll(async () => {
    lab = await startUpstreamApp([
      {
        id: 'strict-chat',
        upstreamModel: 'qwen-7b',
        capabilities: { supported_input_types: ['text'], json_schema: true },
        parameters: ['stream', 'stream_options', 'max_tokens', 'response_format'],
        // $2 per million prompt tokens, $4 per million completion tokens
        pricing: { prompt: 2.0, completion: 4.0 },
      },
    ]);
    ({ app, upstream } = lab);
    key = await app.createKey('structurers', 'pro');
    await app.container.services.accounts.addCredits('structurers', 5);
    orgId = (await app.container.stores.accounts.findOrg('structurers'))!.id;
    client = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1/compat`, maxRetries: 0 });
  });
  afterAll(() => lab.close());

  const balance = () => app.container.stores.wallets.balance(orgId);
  const ask = (extra: Record<string, unknown> = {}) =>
    client.chat.completions.create({
      model: 'strict-chat',
      messages: [{ role: 'user', content: 'Read the invoice' }],
      response_format: strictFormat,
      ...extra,
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);

  it('answers a valid first reply after one upstream call, billed for that call', async () => {
    upstream.next({ kind: 'reply', content: VALID, usage: { prompt_tokens: 1000, completion_tokens: 500 } });
    const calls = upstream.requests.length;
    const before = await balance();
    const { data: reply, response } = await ask().withResponse();
    expect(JSON.parse(reply.choices[0]!.message.content!)).toEqual({ invoice_number: 'INV-7', total: 12.5 });
    expect(response.headers.get('x-prism-schema-attempts')).toBe('1');
    expect(upstream.requests.length - calls).toBe(1);
    // the schema reaches the upstream as the caller sent it
    expect(upstream.requests.at(-1)!.body.response_format).toEqual(strictFormat);
    expect(reply.usage).toMatchObject({ prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 });
    // 1000 × $2/M + 500 × $4/M = $0.004
    expect(before - (await balance())).toBe(4000);
  });

  it('retries an invalid reply once with its problems, answers the valid retry and bills both calls', async () => {
    upstream.next(
      { kind: 'reply', content: WRONG_TYPE, usage: { prompt_tokens: 1000, completion_tokens: 500 } },
      { kind: 'reply', content: VALID, usage: { prompt_tokens: 1200, completion_tokens: 300 } },
    );
    const calls = upstream.requests.length;
    const before = await balance();
    const { data: reply, response } = await ask().withResponse();
    expect(JSON.parse(reply.choices[0]!.message.content!)).toEqual({ invoice_number: 'INV-7', total: 12.5 });
    expect(response.headers.get('x-prism-schema-attempts')).toBe('2');
    expect(upstream.requests.length - calls).toBe(2);

    const retry = upstream.requests.at(-1)!.body as { messages: { role: string; content: string }[] };
    expect(retry.messages).toHaveLength(3);
    expect(retry.messages[0]).toEqual({ role: 'user', content: 'Read the invoice' });
    expect(retry.messages[1]).toEqual({ role: 'assistant', content: WRONG_TYPE });
    expect(retry.messages[2]!.role).toBe('user');
    expect(retry.messages[2]!.content).toContain('/total must be number');
    expect(upstream.requests.at(-1)!.body.response_format).toEqual(strictFormat);

    // the usage shown is what is billed: both calls
    expect(reply.usage).toMatchObject({ prompt_tokens: 2200, completion_tokens: 800, total_tokens: 3000 });
    // 2200 × $2/M + 800 × $4/M = $0.0076
    expect(before - (await balance())).toBe(7600);
  });

  it('answers 502 upstream_schema_violation when the retry fails too, and bills nothing', async () => {
    upstream.next(
      { kind: 'reply', content: WRONG_TYPE, usage: { prompt_tokens: 1000, completion_tokens: 500 } },
      { kind: 'reply', content: JSON.stringify({ total: 3 }), usage: { prompt_tokens: 1200, completion_tokens: 300 } },
    );
    const calls = upstream.requests.length;
    const before = await balance();
    const error = await ask().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    const apiError = error as InstanceType<typeof OpenAI.APIError>;
    expect(apiError.status).toBe(502);
    expect(apiError.code).toBe('upstream_schema_violation');
    expect(apiError.type).toBe('upstream_error');
    expect(apiError.param).toBe('response_format');
    expect(apiError.message).toContain("must have required property 'invoice_number'");
    expect(apiError.message).not.toContain('INV-7'); // the reply itself is not echoed
    expect(upstream.requests.length - calls).toBe(2);
    expect(before - (await balance())).toBe(0);
  });

  it('has the gateway error body of every other 5xx', async () => {
    upstream.next({ kind: 'reply', content: WRONG_TYPE }, { kind: 'reply', content: WRONG_TYPE });
    const res = await fetch(`${app.url}/v1/openai/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'strict-chat',
        messages: [{ role: 'user', content: 'Read the invoice' }],
        response_format: strictFormat,
      }),
    });
    expect(res.status).toBe(502);
    const requestId = res.headers.get('x-request-id');
    expect(requestId).toBeTruthy();
    expect(await res.json()).toEqual({
      error: {
        message: expect.stringMatching(/^\[lab\] .*\/total must be number$/) as unknown,
        type: 'upstream_error',
        code: 'upstream_schema_violation',
        param: 'response_format',
        request_id: requestId,
      },
    });
  });

  it('treats a reply that is not JSON like one that does not match: retried, then 502', async () => {
    upstream.next(
      { kind: 'reply', content: 'Sure! The total is 12.5.', usage: { prompt_tokens: 1000, completion_tokens: 500 } },
      {
        kind: 'reply',
        content: '```json\n{"invoice_number": "INV-7"',
        usage: { prompt_tokens: 1200, completion_tokens: 300 },
      },
    );
    const before = await balance();
    const calls = upstream.requests.length;
    const error = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(502);
    expect(error.code).toBe('upstream_schema_violation');
    expect(error.message).toContain('not JSON');
    const retry = upstream.requests.at(-1)!.body as { messages: { content: string }[] };
    expect(retry.messages[2]!.content).toContain('not JSON');
    expect(upstream.requests.length - calls).toBe(2);
    expect(before - (await balance())).toBe(0);

    // and a non-JSON first reply followed by a valid one is answered
    upstream.next(
      { kind: 'reply', content: 'Sure! The total is 12.5.', usage: { prompt_tokens: 1000, completion_tokens: 500 } },
      { kind: 'reply', content: VALID, usage: { prompt_tokens: 1200, completion_tokens: 300 } },
    );
    const reply = await ask();
    expect(JSON.parse(reply.choices[0]!.message.content!)).toEqual({ invoice_number: 'INV-7', total: 12.5 });
  });

  it("serves the SDK's own strict path: chat.completions.parse with zodResponseFormat gets the retried, parsed object", async () => {
    upstream.next(
      { kind: 'reply', content: WRONG_TYPE, usage: { prompt_tokens: 1000, completion_tokens: 500 } },
      { kind: 'reply', content: VALID, usage: { prompt_tokens: 1200, completion_tokens: 300 } },
    );
    const Invoice = z.object({ invoice_number: z.string(), total: z.number() });
    const completion = await client.chat.completions.parse({
      model: 'strict-chat',
      messages: [{ role: 'user', content: 'Read the invoice' }],
      response_format: zodResponseFormat(Invoice, 'invoice'),
    });
    expect(completion.choices[0]!.message.parsed).toEqual({ invoice_number: 'INV-7', total: 12.5 });
    // the SDK asked for strict: the gateway checked and retried with the schema it sent
    const sent = upstream.requests.at(-1)!.body.response_format as { json_schema: { strict: boolean } };
    expect(sent.json_schema.strict).toBe(true);
    expect((upstream.requests.at(-1)!.body.messages as unknown[]).length).toBe(3);
  });

  it('passes a non-strict json_schema reply through unchanged, after one call, checked by nobody', async () => {
    upstream.next({ kind: 'reply', content: WRONG_TYPE, usage: { prompt_tokens: 1000, completion_tokens: 500 } });
    const calls = upstream.requests.length;
    const before = await balance();
    const { data: reply, response } = await ask({
      response_format: { type: 'json_schema', json_schema: { name: 'invoice', schema: INVOICE_SCHEMA } },
    }).withResponse();
    expect(reply.choices[0]!.message.content).toBe(WRONG_TYPE);
    expect(response.headers.get('x-prism-schema-attempts')).toBeNull();
    expect(upstream.requests.length - calls).toBe(1);
    expect(before - (await balance())).toBe(4000);
  });

  it('streams a strict reply only once it is checked: the retried, valid reply arrives as chunks with usage', async () => {
    upstream.next(
      { kind: 'reply', content: WRONG_TYPE, usage: { prompt_tokens: 1000, completion_tokens: 500 } },
      { kind: 'reply', content: VALID, usage: { prompt_tokens: 1200, completion_tokens: 300 } },
    );
    const calls = upstream.requests.length;
    const before = await balance();
    const stream = await client.chat.completions.create({
      model: 'strict-chat',
      messages: [{ role: 'user', content: 'Read the invoice' }],
      response_format: strictFormat,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined = null;
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(JSON.parse(text)).toEqual({ invoice_number: 'INV-7', total: 12.5 });
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 2200, completion_tokens: 800 });
    expect(upstream.requests.length - calls).toBe(2);
    // both upstream calls were asked for whole replies, so the gateway could check them before sending a byte
    expect(upstream.requests.slice(-2).map((r) => r.body.stream ?? false)).toEqual([false, false]);
    expect(before - (await balance())).toBe(7600);
  });

  it('answers a streaming caller 502 before any chunk when the strict reply fails twice', async () => {
    upstream.next({ kind: 'reply', content: WRONG_TYPE }, { kind: 'reply', content: WRONG_TYPE });
    const before = await balance();
    const error = (await client.chat.completions
      .create({
        model: 'strict-chat',
        messages: [{ role: 'user', content: 'Read the invoice' }],
        response_format: strictFormat,
        stream: true,
      })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.status).toBe(502);
    expect(error.code).toBe('upstream_schema_violation');
    expect(before - (await balance())).toBe(0);
  });
});
