/**
 * Issue 47, items 4 and 5: the VLM Run SDKs' `{image,document,audio,video}.execute` call
 * (`POST /v1/{kind}/execute`, body as the TS SDK's `executeLegacy` and the PY SDK send it; the published `vlmrun`
 * 0.2.12 has no execute method, so the call goes through that SDK's own `APIRequestor`, which is what its methods
 * use), and agents created without a name twice.
 */
import { APIRequestor } from 'vlmrun';
import { makeTextPdf, renderReceiptImage } from '../helpers/media-fixtures';
import { call, startTestApp, uploadFile, type TestApp } from '../helpers/test-app';

interface ExecutionWire {
  id: string;
  name: string;
  status: string;
  response: Record<string, unknown> | null;
  usage: Record<string, unknown>;
}

const RECEIPT_SCHEMA = {
  type: 'object',
  properties: {
    company: { type: ['string', 'null'], description: 'the issuing business as printed' },
    total: { type: ['string', 'number', 'null'], description: 'the final amount paid' },
  },
  required: ['company', 'total'],
};

describe('POST /v1/{kind}/execute through the vlmrun SDK requestor', () => {
  let app: TestApp;
  let key: string;
  let sdk: APIRequestor;

  beforeAll(async () => {
    app = await startTestApp();
    key = await app.createKey('kind-execute');
    await app.container.services.accounts.addCredits('kind-execute', 5);
    sdk = new APIRequestor({ apiKey: key, baseURL: `${app.url}/v1` });
    const created = await call(`${app.url}/v1/agent/create`, {
      key,
      json: { name: 'receipt-reader', config: { prompt: 'Extract the receipt fields', json_schema: RECEIPT_SCHEMA } },
    });
    expect(created.status).toBe(200);
  });
  afterAll(() => app.close());

  const execute = async (kind: string, body: Record<string, unknown>) =>
    (await sdk.request<ExecutionWire>('POST', `${kind}/execute`, undefined, body))[0];

  it('image/execute runs the named agent on the images and answers a completed execution', async () => {
    const png = renderReceiptImage().toString('base64');
    const run = await execute('image', {
      name: 'receipt-reader',
      version: 'latest',
      images: [`data:image/png;base64,${png}`],
      batch: false,
      callback_url: null,
    });
    expect(run.status).toBe('completed');
    expect(run.name).toMatch(/^receipt-reader:/);
    expect(run.response?.company).toMatch(/GREENLEAF/);
    const polled = (await (await call(`${app.url}/v1/agent/executions/${run.id}`, { key })).json()) as ExecutionWire;
    expect(polled.response).toEqual(run.response);
  }, 180_000); // the first OCR run loads its models

  it('document/execute with batch answers at once and the execution completes', async () => {
    const pdf = await makeTextPdf([['GREENLEAF MARKET', 'TOTAL 26.22']]);
    const upload = await uploadFile(app.url, key, pdf, { filename: 'receipt.pdf' });
    const fileId = ((await upload.json()) as { id: string }).id;
    const run = await execute('document', { name: 'receipt-reader', version: 'latest', file_id: fileId, batch: true });
    expect(['pending', 'enqueued', 'running', 'completed']).toContain(run.status);
    let polled = run;
    for (let i = 0; i < 200 && polled.status !== 'completed' && polled.status !== 'failed'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      polled = (await (await call(`${app.url}/v1/agent/executions/${run.id}`, { key })).json()) as ExecutionWire;
    }
    expect(polled.status).toBe('completed');
    expect(String(polled.response?.total)).toContain('26.22');
  }, 180_000);

  it('a name with no agent runs the skill of that name', async () => {
    const png = renderReceiptImage().toString('base64');
    const run = await execute('image', { name: 'receipt', images: [`data:image/png;base64,${png}`], batch: false });
    expect(run.status).toBe('completed');
    expect(run.response).not.toBeNull();
  }, 180_000);

  it('refuses a name that is neither an agent nor a skill, and a missing input, with the spec errors', async () => {
    const unknown = await call(`${app.url}/v1/audio/execute`, {
      key,
      json: { name: 'nobody-here', url: 'https://example.com/a.mp3' },
    });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({
      detail: { error: { type: 'not_found_error', code: 'agent_not_found' } },
    });
    const before = ((await (await call(`${app.url}/v1/agent/executions?limit=1000`, { key })).json()) as unknown[])
      .length;
    const noInput = await call(`${app.url}/v1/video/execute`, { key, json: { name: 'receipt-reader' } });
    expect(noInput.status).toBe(422);
    const noImages = await call(`${app.url}/v1/image/execute`, { key, json: { name: 'receipt-reader', images: [] } });
    expect(noImages.status).toBe(422);
    const after = ((await (await call(`${app.url}/v1/agent/executions?limit=1000`, { key })).json()) as unknown[])
      .length;
    expect(after).toBe(before);
    expect((await call(`${app.url}/v1/image/execute`, { json: { name: 'x', images: ['a'] } })).status).toBe(401);
  });

  it('the SDK shows an object detail readably (docs/errors.md): its message is the body as JSON', async () => {
    const failure = await execute('image', { name: 'nobody-here', images: ['data:image/png;base64,AAAA'] }).then(
      () => null,
      (error: unknown) => error as { message: string; http_status: number },
    );
    expect(failure?.http_status).toBe(404);
    expect(failure?.message).not.toContain('[object Object]');
    const body = JSON.parse(failure?.message ?? '{}') as { detail: { error: { code: string } } };
    expect(body.detail.error.code).toBe('agent_not_found');
  });
});

describe('agents created without a name', () => {
  let app: TestApp;
  let key: string;
  beforeAll(async () => {
    app = await startTestApp();
    key = await app.createKey('unnamed-agents');
  });
  afterAll(() => app.close());

  const create = async (body: unknown) => {
    const res = await call(`${app.url}/v1/agent/create`, { key, json: body });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('the same unnamed create twice makes two agents with distinct names', async () => {
    const body = { config: { prompt: 'Extract the total and date from this receipt' } };
    const first = await create(body);
    const second = await create(body);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(first.body.name).toBe('extract-total-date-receipt');
    expect(second.body.name).toMatch(/^extract-total-date-receipt-[0-9a-f]{8}$/);
    expect(second.body.id).not.toBe(first.body.id);
    const listed = (await (await call(`${app.url}/v1/agent`, { key })).json()) as { name: string }[];
    expect(listed.map((a) => a.name)).toEqual(expect.arrayContaining([first.body.name, second.body.name]));
  });

  it('a name the caller gave stays 409 agent_exists when taken', async () => {
    const body = { name: 'chosen', config: { prompt: 'Summarise' } };
    expect((await create(body)).status).toBe(200);
    const again = await create(body);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ detail: { error: { type: 'invalid_request_error', code: 'agent_exists' } } });
  });
});
