/**
 * Gateway errors as the official `openai` SDK sees them: for every status a client meets (400, 401, 402, 404,
 * 422, 429, 504) the SDK's error carries Prism's status, code, type, param and message, because the gateway body
 * has the top-level `error` object the SDK reads (beside the spec's `detail`, which the VLM Run clients read).
 */
import OpenAI, { APIError } from 'openai';
import type { ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, type TestApp } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

/** The rejection of `promise` as the SDK's APIError (fails the test if the call succeeded). */
async function sdkError(promise: Promise<unknown>): Promise<APIError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof APIError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

describe('gateway errors through the openai SDK', () => {
  let lab: UpstreamApp;
  let upstream: ScriptedUpstream;
  let app: TestApp;
  let client: OpenAI;
  const hi = [{ role: 'user' as const, content: 'hi' }];

  const clientFor = (apiKey: string, prefix = '/v1/compat'): OpenAI =>
    new OpenAI({ apiKey, baseURL: `${app.url}${prefix}`, maxRetries: 0 });

  beforeAll(async () => {
    lab = await startUpstreamApp(
      [
        {
          id: 'lab-chat',
          upstreamModel: 'qwen-7b',
          // method_params is listed so that the gateway, not the capability check, has to refuse it (never dropped).
          parameters: ['max_tokens', 'temperature', 'stream', 'method_params'],
          pricing: { prompt: 2.0, completion: 4.0 },
          more: { ttft_timeout_s: 0.3, total_timeout_s: 0.5 },
        },
      ],
      { provider: 'vLLM', env: { PRISM_RATE_LIMIT_PER_MINUTE: '8' } },
    );
    ({ app, upstream } = lab);
    const key = await app.createKey('paying', 'pro');
    await app.container.services.accounts.addCredits('paying', 5);
    client = clientFor(key);
  });
  afterAll(() => lab.close());

  it('400 capability_violation names the parameter the model does not take', async () => {
    const err = await sdkError(client.chat.completions.create({ model: 'lab-chat', messages: hi, top_p: 0.5 }));
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect([err.status, err.code, err.type, err.param]).toEqual([
      400,
      'capability_violation',
      'invalid_request_error',
      'top_p',
    ]);
    expect(err.message).toMatch(/^400 .*top_p/);
    expect(upstream.requests).toHaveLength(0);
  });

  it('400 capability_violation for method_params sent to an upstream model, which would never see them', async () => {
    const sent = upstream.requests.length;
    const err = await sdkError(
      client.chat.completions.create({ model: 'lab-chat', messages: hi, method_params: { dpi: 300 } } as never),
    );
    expect([err.status, err.code, err.param]).toEqual([400, 'capability_violation', 'method_params']);
    expect(upstream.requests).toHaveLength(sent);
  });

  it('401 for a key that matches nothing, on both gateway prefixes', async () => {
    for (const prefix of ['/v1/compat', '/v1/openai']) {
      const err = await sdkError(
        clientFor('prism_wrong', prefix).chat.completions.create({ model: 'lab-chat', messages: hi }),
      );
      expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
      expect([err.status, err.code, err.type, err.param]).toEqual([
        401,
        'invalid_api_key',
        'authentication_error',
        null,
      ]);
      expect(err.message).toBe('401 Invalid API Key');
    }
  });

  it('402 insufficient_credits when the organisation cannot pay', async () => {
    const broke = clientFor(await app.createKey('broke', 'pro'));
    const err = await sdkError(broke.chat.completions.create({ model: 'lab-chat', messages: hi }));
    expect([err.status, err.code, err.type, err.param]).toEqual([402, 'insufficient_credits', 'billing_error', null]);
    expect(err.message).toMatch(/no credit left/);
  });

  it('404 model_not_found for an unknown model, with param "model"', async () => {
    const err = await sdkError(client.chat.completions.create({ model: 'no-such-model', messages: hi }));
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect([err.status, err.code, err.type, err.param]).toEqual([404, 'model_not_found', 'model_not_found', 'model']);
    expect(err.message).toMatch(/'no-such-model' does not exist/);
  });

  it('422 names the first bad field, and keeps the spec detail list beside it', async () => {
    const err = await sdkError(client.chat.completions.create({ model: 'lab-chat', messages: [] }));
    expect(err).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect([err.status, err.code, err.type, err.param]).toEqual([422, null, 'validation_error', 'messages']);
    expect(err.message).toBe('422 Invalid request: messages: List should have at least 1 item');

    const raw = await call(`${app.url}/v1/compat/embeddings`, {
      json: { model: 'prism-embed-text-1', dimensions: 'x' },
    });
    expect(raw.status).toBe(422);
    const body = (await raw.json()) as { detail: { loc: unknown[] }[]; error: Record<string, unknown> };
    expect(body.detail.map((issue) => issue.loc)).toEqual([
      ['body', 'input'],
      ['body', 'dimensions'],
    ]);
    expect(body.error).toMatchObject({
      param: 'input',
      message: 'Invalid request: input: Field required (and 1 more issue in detail)',
    });
  });

  it('429 rate_limit_exceeded with the tier and Retry-After', async () => {
    const limited = clientFor(await app.createKey('paying', 'pro'));
    for (let i = 0; i < 8; i += 1) await limited.models.list();
    const err = await sdkError(limited.models.retrieve('lab-chat'));
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect([err.status, err.code, err.type, err.param]).toEqual([
      429,
      'rate_limit_exceeded',
      'rate_limit_exceeded',
      null,
    ]);
    expect(err.error).toMatchObject({ tier: 'pro', message: 'Rate limit exceeded: 8 per 1 minute' });
    expect(Number(err.headers?.get('retry-after'))).toBeGreaterThan(0);
  });

  it('504 deadline_exceeded when the model misses its deadline, naming the provider', async () => {
    upstream.next({ kind: 'hang' });
    const err = await sdkError(client.chat.completions.create({ model: 'lab-chat', messages: hi }));
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect([err.status, err.code, err.type, err.param]).toEqual([504, 'deadline_exceeded', 'timeout_error', null]);
    expect(err.message).toMatch(/^504 \[vLLM\]/);
  });

  it('504 ttft_timeout on a stream whose first token is late', async () => {
    upstream.next({ kind: 'stream', chunks: ['late'], firstChunkDelayMs: 2000 });
    const err = await sdkError(client.chat.completions.create({ model: 'lab-chat', messages: hi, stream: true }));
    expect([err.status, err.code, err.type, err.param]).toEqual([504, 'ttft_timeout', 'timeout_error', null]);
  });
});
