/**
 * The decision stream over a real WebSocket (`ws` client) and `POST /v1/compat/decisions` over fetch: session
 * validation, typed answers on generated frames, backpressure under a flood, bad frames that do not end the
 * session, auth, HTTP/stream agreement, billing, and questions routed to a scripted upstream vision model.
 */
import { connectStream, type StreamClient } from '../helpers/decision-client';
import { blockFrame, solidFrame, textFrame } from '../helpers/decision-frames';
import type { ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, startTestApp, type TestApp } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

const MEASURED = [
  { id: 'has_text', question: 'Is there text?', type: 'boolean' },
  { id: 'lines', question: 'How many lines of text are there?', type: 'integer' },
  { id: 'bright', question: 'Is it bright?', type: 'boolean' },
  { id: 'level', question: 'What is the brightness level?', type: 'enum', options: ['dark', 'dim', 'bright'] },
  { id: 'changed', question: 'How much changed since the previous frame?', type: 'number' },
  { id: 'colour', question: 'What is the dominant colour?', type: 'enum', options: ['red', 'white', 'black'] },
];

const refused = async (promise: Promise<unknown>): Promise<{ status: number; body: string }> => {
  try {
    await promise;
  } catch (error) {
    return error as { status: number; body: string };
  }
  throw new Error('expected the upgrade to be refused');
};

describe('decision stream and endpoint (local engine only)', () => {
  let app: TestApp;
  let key: string;
  const open: StreamClient[] = [];
  const connect = async (k?: string): Promise<StreamClient> => {
    const client = await connectStream(app.url, k);
    open.push(client);
    return client;
  };

  beforeAll(async () => {
    app = await startTestApp({ PRISM_DECISION_FRAME_BYTES: String(512 * 1024) });
    key = await app.createKey('robots', 'pro');
    await app.container.services.accounts.addCredits('robots', 1);
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await app.close();
  });

  it('creates a session and answers every frame with typed, correct answers', async () => {
    const client = await connect(key);
    client.send({ type: 'session.create', questions: MEASURED });
    const created = await client.next('session.created');
    expect(created.session.model).toBe('prism-decide-1');
    expect(created.session.questions.map((q) => [q.id, q.route, q.kind])).toEqual([
      ['has_text', 'local', 'text_present'],
      ['lines', 'local', 'text_line_count'],
      ['bright', 'local', 'brightness'],
      ['level', 'local', 'brightness'],
      ['changed', 'local', 'change'],
      ['colour', 'local', 'dominant_colour'],
    ]);

    const frames = [textFrame(), await solidFrame('#f4f4f4'), await solidFrame('#101010', 'png'), await blockFrame()];
    const answers = [];
    for (const frame of frames) {
      await client.sendFrame(frame);
      // One frame at a time, so none is dropped for backpressure.
      const decision = await client.next('decision', (d) => d.seq === answers.length + 1);
      answers.push(decision.answers);
      expect(decision.usage.cost).toBeGreaterThan(0);
      expect(decision.latency_ms).toBeGreaterThan(0);
    }
    const [text, blank, dark, changed] = answers;
    expect(text).toMatchObject({ has_text: true, lines: 3, bright: true, level: 'bright', changed: null });
    expect(text?.colour).toBe('white');
    expect(blank).toMatchObject({ has_text: false, lines: 0, bright: true, level: 'bright', colour: 'white' });
    expect(blank?.changed).toBeGreaterThan(0);
    expect(dark).toMatchObject({ has_text: false, lines: 0, bright: false, level: 'dark', colour: 'black' });
    expect(dark?.changed).toBeGreaterThan(0.9);
    // Against the dark frame, the light right half of the block frame changed and its dark left half did not.
    expect(changed?.changed).toBeGreaterThan(0.4);
    expect(changed?.changed).toBeLessThan(0.6);
    expect(client.events.filter((e) => e.type !== 'session.created' && e.type !== 'decision')).toEqual([]);
  });

  it('reads the words with OCR when a question needs them', async () => {
    const client = await connect(key);
    client.send({
      type: 'session.create',
      session: {
        questions: [
          { id: 'exit', question: 'Does the text contain "exit 12"?', type: 'boolean' },
          { id: 'taxi', question: "Does the sign say 'taxi'?", type: 'boolean' },
          { id: 'read', question: 'Read the text.', type: 'string' },
        ],
      },
    });
    await client.next('session.created');
    await client.sendFrame(textFrame());
    const decision = await client.next('decision');
    expect(decision.answers).toMatchObject({ exit: true, taxi: false });
    expect(String(decision.answers.read)).toContain('Platform 3');
  });

  it('refuses bad question sets with an error naming the question, and starts no session', async () => {
    const client = await connect(key);
    const errorFor = async (message: Record<string, unknown>) => {
      client.send({ type: 'session.create', ...message });
      return (await client.next('error')).error;
    };
    expect(await errorFor({})).toMatchObject({ type: 'validation_error', param: 'questions' });
    const noOptions = await errorFor({
      questions: [MEASURED[0], { id: 'mood', question: 'Which mood?', type: 'enum' }],
    });
    expect(noOptions).toMatchObject({ param: 'questions.1.options', question: 'mood' });
    const duplicate = await errorFor({ questions: [MEASURED[0], MEASURED[0]] });
    expect(duplicate).toMatchObject({ param: 'questions.1.id', question: 'has_text' });
    const bounds = await errorFor({
      questions: [{ id: 'n', question: 'How many lines of text?', type: 'integer', min: 5, max: 1 }],
    });
    expect(bounds).toMatchObject({ param: 'questions.0.min', question: 'n' });
    const wrongType = await errorFor({ questions: [{ id: 'x', question: 'Is there text?', type: 'date' }] });
    expect(wrongType).toMatchObject({ param: 'questions.0.type', question: 'x' });
    // No local measure answers this and no upstream is configured.
    const smile = await errorFor({
      questions: [MEASURED[0], { id: 'smile', question: 'Is the person smiling?', type: 'boolean' }],
    });
    expect(smile).toMatchObject({ code: 'capability_violation', param: 'questions.smile', question: 'smile' });
    expect(smile.message).toContain('Is the person smiling?');
    // The local engine takes no steps (as diffusion engines refuse reasoning_effort): 422.
    expect(await errorFor({ steps: 4, questions: [MEASURED[0]] })).toMatchObject({
      type: 'validation_error',
      param: 'steps',
    });
    expect(await errorFor({ steps: 9, questions: [MEASURED[0]] })).toMatchObject({ param: 'steps' });
    expect(await errorFor({ model: 'no-such-model', questions: [MEASURED[0]] })).toMatchObject({
      code: 'model_not_found',
    });
    expect(await errorFor({ model: 'prism-1', questions: [MEASURED[0]] })).toMatchObject({
      code: 'capability_violation',
      param: 'model',
    });
    // Still no session: a frame is refused.
    await client.sendFrame(textFrame());
    expect((await client.next('error', (e) => e.seq === 1)).error.code).toBe('session_not_started');
    expect(client.events.some((e) => e.type === 'session.created')).toBe(false);
  });

  it('refuses a frame before the session, then works once the session exists', async () => {
    const client = await connect(key);
    await client.sendFrame(textFrame());
    const early = await client.next('error');
    expect(early).toMatchObject({ seq: 1, error: { code: 'session_not_started', type: 'invalid_request_error' } });
    client.send({ type: 'session.create', questions: [MEASURED[0]] });
    await client.next('session.created');
    client.send({ type: 'session.create', questions: [MEASURED[0]] });
    expect((await client.next('error')).error.code).toBe('session_already_started');
    await client.sendFrame(textFrame());
    expect((await client.next('decision')).answers).toEqual({ has_text: true });
  });

  it('answers malformed, oversized and non-JSON messages with events and keeps the session', async () => {
    const client = await connect(key);
    client.send({ type: 'session.create', questions: [MEASURED[0], MEASURED[2]] });
    await client.next('session.created');
    await client.sendFrame(Buffer.from('definitely not an image'));
    const garbage = await client.next('error', (e) => e.seq === 1);
    expect(garbage.error).toMatchObject({ code: 'invalid_media', type: 'invalid_request_error' });
    const truncated = textFrame().subarray(0, 2000);
    await client.sendFrame(truncated);
    expect((await client.next('error', (e) => e.seq === 2)).error.code).toBe('invalid_media');
    await client.sendFrame(Buffer.alloc(600 * 1024, 0xff));
    expect((await client.next('error', (e) => e.seq === 3)).error.code).toBe('payload_too_large');
    client.ws.send('{not json');
    expect((await client.next('error', (e) => e.seq === undefined)).error.code).toBe('invalid_message');
    client.send({ type: 'session.dance' });
    expect((await client.next('error', (e) => e.seq === undefined)).error.type).toBe('validation_error');
    await client.sendFrame(textFrame());
    const good = await client.next('decision');
    expect(good).toMatchObject({ seq: 4, answers: { has_text: true, bright: true } });
    client.send({ type: 'session.close' });
    const closed = await client.next('session.closed');
    expect(closed).toMatchObject({ reason: 'client_closed', frames: { received: 4, decided: 1, failed: 3 } });
    expect((await client.closed).code).toBe(1000);
  });

  it('authenticates like the gateway: key, anonymous, invalid key', async () => {
    const invalid = await refused(connectStream(app.url, 'sk-not-a-key'));
    expect(invalid.status).toBe(401);
    expect(JSON.parse(invalid.body)).toMatchObject({
      detail: 'Invalid API Key',
      error: { code: 'invalid_api_key', type: 'authentication_error' },
    });

    const wrongPath = await refused(connectStream(app.url, key, '/v1/compat/chat/completions'));
    expect(wrongPath.status).toBe(404);

    const anonymous = await connect();
    anonymous.send({ type: 'session.create', questions: [MEASURED[0]] });
    await anonymous.next('session.created');
    await anonymous.sendFrame(textFrame());
    expect((await anonymous.next('decision')).usage.cost).toBe(0.0001);

    const sentinel = await connect('prism');
    sentinel.send({ type: 'session.create', questions: [MEASURED[0]] });
    await sentinel.next('session.created');

    const before = await app.container.stores.wallets.balance(await orgIdOf(app, key));
    const keyed = await connect(key);
    keyed.send({ type: 'session.create', questions: [MEASURED[0]] });
    await keyed.next('session.created');
    await keyed.sendFrame(textFrame());
    await keyed.next('decision');
    expect(await app.container.stores.wallets.balance(await orgIdOf(app, key))).toBe(before - 100);
  });

  it('gives the same answers and usage over HTTP as on the stream', async () => {
    const frame = textFrame();
    const questions = MEASURED.filter((q) => q.id !== 'changed');
    const client = await connect(key);
    client.send({ type: 'session.create', questions });
    await client.next('session.created');
    await client.sendFrame(frame);
    const streamed = await client.next('decision');

    const res = await call(`${app.url}/v1/compat/decisions`, {
      key,
      json: { questions, image: `data:image/jpeg;base64,${frame.toString('base64')}` },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ object: 'decision', model: 'prism-decide-1' });
    expect(body.answers).toEqual(streamed.answers);
    expect(body.usage).toEqual(streamed.usage);

    const bad = await call(`${app.url}/v1/compat/decisions`, {
      key,
      json: { questions: [{ id: 'smile', question: 'Is the person smiling?', type: 'boolean' }], image: 'aGk=' },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { detail: { error: unknown } }).detail.error).toMatchObject({
      code: 'capability_violation',
      param: 'questions.smile',
    });
    const notImage = await call(`${app.url}/v1/compat/decisions`, {
      key,
      json: { questions, image: Buffer.from('plain text').toString('base64') },
    });
    expect(notImage.status).toBe(400);
    const invalid = await call(`${app.url}/v1/compat/decisions`, { key: 'sk-nope', json: { questions } });
    expect(invalid.status).toBe(401);

    const kinds = (await (await call(`${app.url}/v1/compat/decisions`)).json()) as { data: { kind: string }[] };
    expect(kinds.data.map((k) => k.kind)).toEqual(expect.arrayContaining(['text_present', 'brightness', 'change']));
  });
});

async function orgIdOf(app: TestApp, key: string): Promise<string> {
  const principal = await app.container.services.auth.authenticate(`Bearer ${key}`, {
    clientIp: '127.0.0.1',
    surface: 'gateway',
  });
  if (principal.kind !== 'user') throw new Error('expected a user');
  return principal.orgId;
}

describe('decision stream with an upstream vision model', () => {
  let lab: UpstreamApp;
  let upstream: ScriptedUpstream;
  let app: TestApp;

  beforeAll(async () => {
    // Three decisions an hour per caller: the routing test spends two, the budget test the third.
    lab = await startUpstreamApp(
      [
        {
          id: 'lab-vl',
          upstreamModel: 'qwen-vl',
          capabilities: { supported_input_types: ['text', 'image'], json_schema: true },
          parameters: ['temperature', 'response_format', 'steps'],
          pricing: { prompt: 2.0, completion: 4.0 },
        },
      ],
      { provider: 'vLLM', env: { PRISM_DECISION_IDLE_S: '1', PRISM_DECISION_PER_HOUR: '3' } },
    );
    ({ app, upstream } = lab);
  });
  afterAll(() => lab.close());

  it('routes a question no measure answers to the upstream model and bills its tokens', async () => {
    upstream.next({
      kind: 'reply',
      content: '{"smile": true, "people": 2.5}',
      usage: { prompt_tokens: 400, completion_tokens: 10 },
    });
    const client = await connectStream(app.url, app.ownerKey);
    client.send({
      type: 'session.create',
      questions: [
        MEASURED[0],
        { id: 'smile', question: 'Is the person smiling?', type: 'boolean' },
        { id: 'people', question: 'How many people are there?', type: 'integer' },
      ],
    });
    const created = await client.next('session.created');
    expect(created.session.upstream_model).toBe('lab-vl');
    expect(created.session.questions.map((q) => q.route)).toEqual(['local', 'upstream', 'upstream']);
    await client.sendFrame(textFrame());
    const decision = await client.next('decision');
    // 2.5 is not an integer: the answer does not fit and is null, never rounded into an invention.
    expect(decision.answers).toEqual({ has_text: true, smile: true, people: null });
    expect(decision.usage).toMatchObject({ prompt_tokens: 400, completion_tokens: 10 });
    // 400 × $2/M + 10 × $4/M = $0.00084.
    expect(decision.usage.cost).toBeCloseTo(0.00084, 8);

    const request = upstream.requests.at(-1);
    expect(request?.body.model).toBe('qwen-vl');
    const format = request?.body.response_format as { json_schema: { schema: { required: string[] } } };
    expect(format.json_schema.schema.required).toEqual(['smile', 'people']);
    const content = (request?.body.messages as { content: unknown }[])[1]?.content as { type: string }[];
    expect(content.map((p) => p.type)).toEqual(['text', 'image_url']);

    // Upstream models take `steps` when their supported parameters say so, and it is forwarded.
    upstream.next({ kind: 'reply', content: '{"smile": false}' });
    const direct = await connectStream(app.url, app.ownerKey);
    direct.send({
      type: 'session.create',
      model: 'lab-vl',
      steps: 3,
      questions: [{ id: 'smile', question: 'Is the person smiling?', type: 'boolean' }],
    });
    await direct.next('session.created');
    await direct.sendFrame(await solidFrame('#888888'));
    expect((await direct.next('decision')).answers).toEqual({ smile: false });
    expect(upstream.requests.at(-1)?.body.steps).toBe(3);

    // Left alone, both connections are closed for idleness, each with its own event.
    expect(await client.next('session.closed')).toMatchObject({ reason: 'idle_timeout', frames: { decided: 1 } });
    expect(await direct.next('session.closed')).toMatchObject({ reason: 'idle_timeout' });
    await Promise.all([client.closed, direct.closed]);
  });

  it('counts every decision against the caller budget and refuses frames over it without ending the session', async () => {
    const client = await connectStream(app.url, app.ownerKey);
    client.send({ type: 'session.create', questions: [MEASURED[0]] });
    await client.next('session.created');
    await client.sendFrame(textFrame());
    expect((await client.next('decision')).seq).toBe(1);
    await client.sendFrame(textFrame());
    const over = await client.next('error');
    expect(over).toMatchObject({ seq: 2, error: { code: 'rate_limit_exceeded' } });
    expect(over.error.retry_after_s).toBeGreaterThanOrEqual(1);
    expect(over.error.retry_after_s).toBeLessThanOrEqual(3600);
    expect(over.error.message).toContain('3 per 1 hour');
    const res = await call(`${app.url}/v1/compat/decisions`, {
      key: app.ownerKey,
      json: { questions: [MEASURED[0]], image: textFrame().toString('base64') },
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(3600);
    client.send({ type: 'session.close' });
    expect(await client.next('session.closed')).toMatchObject({ frames: { received: 2, decided: 1, failed: 1 } });
  });

  it('ends open sessions with server_shutdown when the server stops', async () => {
    const client = await connectStream(app.url, app.ownerKey);
    client.send({ type: 'session.create', questions: [MEASURED[2]] });
    await client.next('session.created');
    await app.stop();
    expect(await client.next('session.closed')).toMatchObject({ reason: 'server_shutdown' });
    expect((await client.closed).code).toBe(1000);
  });
});
