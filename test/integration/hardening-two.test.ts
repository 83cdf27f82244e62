/**
 * The smaller items of hardening round two, each through a real client: `callback_url` on
 * `/v1/agent/execute` is refused at submission like the generate endpoints'; malformed percent-encoding in a path
 * is a clean 400 (no 500, nothing from the stack); a decision question with the id `__proto__` is answered like any
 * other (the ws client).
 */
import { connectStream } from '../helpers/decision-client';
import { solidFrame } from '../helpers/decision-frames';
import { call, startTestApp, type TestApp } from '../helpers/test-app';

describe('hardening, round two', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it.each([
    'http://127.0.0.1:9/hook',
    'http://localhost/hook',
    'http://[::1]/hook',
    'http://10.0.0.7/hook',
    'http://169.254.169.254/latest',
    'http://0x7f000001/hook',
    'ftp://example.com/hook',
    'http://user:pw@example.com/hook',
  ])('refuses callback_url %s on /v1/agent/execute at submission', async (url) => {
    const res = await call(`${app.url}/v1/agent/execute`, {
      key: app.ownerKey,
      json: { batch: true, callback_url: url, inputs: {}, config: { prompt: 'Say hi.' } },
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { detail: { error: { code: string; param: string; message: string } } };
    expect(body.detail.error).toMatchObject({ code: 'url_not_allowed', param: 'callback_url' });
    expect(body.detail.error.message).toMatch(/^callback_url refused: /);
  });

  it.each(['/v1/files/%', '/v1/compat/files/%zz', '/v1/files/%E0%A4%A', '/v1/predictions/%'])(
    'answers malformed percent-encoding in %s with a clean 400',
    async (path) => {
      const res = await call(`${app.url}${path}`, { key: app.ownerKey });
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text).toMatch(/not valid percent-encoding/);
      expect(text).not.toMatch(/URIError|at .*\.(js|ts):\d+|node_modules/);
    },
  );

  it('answers a decision question whose id is __proto__ like any other', async () => {
    const client = await connectStream(app.url, app.ownerKey);
    // Read off the wire: a zod record would rebuild the object and lose the key, as any plain-object copy does.
    const raw: string[] = [];
    client.ws.on('message', (data: Buffer) => raw.push(data.toString('utf8')));
    try {
      client.send({
        type: 'session.create',
        questions: [
          {
            id: '__proto__',
            question: 'What is the dominant colour?',
            type: 'enum',
            options: ['red', 'white', 'black'],
          },
          { id: 'constructor', question: 'Is it bright?', type: 'boolean' },
        ],
      });
      await client.next('session.created');
      await client.sendFrame(await solidFrame('red'));
      await client.next('decision');
      const wire = raw.map((m) => JSON.parse(m) as { type: string; answers?: Record<string, unknown> });
      const answers = wire.find((e) => e.type === 'decision')?.answers ?? {};
      expect(Object.keys(answers)).toEqual(['__proto__', 'constructor']);
      expect(Object.getOwnPropertyDescriptor(answers, '__proto__')?.value).toBe('red');
      expect(typeof Object.getOwnPropertyDescriptor(answers, 'constructor')?.value).toBe('boolean');
    } finally {
      await client.close();
    }
  });
});
