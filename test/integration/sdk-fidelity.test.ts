/**
 * Issue 32: what the VLM Run SDK's own tests and a new user still tripped on, each through a real client (the
 * `vlmrun` SDK where it reaches the route, plain HTTP otherwise, the openai SDK for chat): feedback reads that 404
 * like submits, feedback on a real chat session, agents created without a name, execution usage that obeys the
 * spec's cost definitions, executions that record their steps (record and `steps.json`), and the small messages
 * (a failure said once, the setting that allows private URLs, the domain a short name means, the inputs an image
 * request takes, generation settings sent at the top level, the generate statuses, a skill made from a chat).
 */
import OpenAI from 'openai';
import { APIError, VlmRun } from 'vlmrun';
import { makeSpeechLike, makeVideo } from '../helpers/media-clips';
import { makeTextPdf, renderReceiptImage } from '../helpers/media-fixtures';
import { call, startTestApp, uploadFile, type TestApp } from '../helpers/test-app';

interface ExecutionWire {
  id: string;
  name: string;
  status: string;
  execution_mode: string;
  response: Record<string, unknown> | null;
  usage: Record<string, unknown> & { message: string | null };
  steps: { index: number; kind: string; name: string; arguments: unknown; error: string | null }[];
}

interface ErrorBody {
  detail: { error: { message: string; code: string | null; param: string | null } };
}

const RECEIPT_SCHEMA = {
  type: 'object',
  properties: {
    company: { type: ['string', 'null'] },
    total: { type: ['number', 'null'] },
  },
};

describe('what the SDK and a new user trip on', () => {
  let app: TestApp;
  let key: string;
  let otherKey: string;
  let client: VlmRun;
  let receiptId: string;

  beforeAll(async () => {
    app = await startTestApp();
    key = await app.createKey('fidelity', 'pro');
    otherKey = await app.createKey('fidelity-other', 'pro');
    await app.container.services.accounts.addCredits('fidelity', 5);
    client = new VlmRun({ apiKey: key, baseURL: `${app.url}/v1` });
    const uploaded = await uploadFile(app.url, key, renderReceiptImage(), { filename: 'receipt.png' });
    receiptId = ((await uploaded.json()) as { id: string }).id;
  });
  afterAll(() => app.close());

  const post = async <T>(path: string, json: unknown, as = key): Promise<{ status: number; body: T }> => {
    const res = await call(`${app.url}${path}`, { key: as, json });
    return { status: res.status, body: (await res.json()) as T };
  };
  const get = async <T>(path: string, as = key): Promise<{ status: number; body: T }> => {
    const res = await call(`${app.url}${path}`, { key: as });
    return { status: res.status, body: (await res.json()) as T };
  };
  const execute = async (body: unknown): Promise<ExecutionWire> => {
    const res = await post<ExecutionWire>('/v1/agent/execute', body);
    expect(res.status).toBe(200);
    return res.body;
  };
  const balance = async (org: string): Promise<number> => {
    const { orgId } = await app.container.services.accounts.addCredits(org, 0);
    return app.container.stores.wallets.balance(orgId);
  };

  describe('1. feedback reads answer 404 for a target that does not exist, as submits do', () => {
    it('for requests, executions and chats', async () => {
      // The SDK submits on the legacy route; an unknown id is its APIError with status 404.
      const submitted = client.feedback.submit({ id: 'no-such-prediction', notes: 'wrong total' });
      await expect(submitted).rejects.toBeInstanceOf(APIError);
      await expect(submitted).rejects.toMatchObject({ http_status: 404 });
      for (const [type, code] of [
        ['request', 'prediction_not_found'],
        ['agent_execution', 'execution_not_found'],
        ['chat', 'chat_not_found'],
      ] as const) {
        const read = await get<ErrorBody>(`/v1/feedback/no-such-id?type=${type}`);
        expect(read.status).toBe(404);
        expect(read.body.detail.error.code).toBe(code);
      }
    });

    it('and list what was submitted for a target that exists (SDK submit, HTTP read)', async () => {
      const prediction = (await client.image.generate({
        images: [`data:image/png;base64,${renderReceiptImage().toString('base64')}`],
        domain: 'document.receipt',
      })) as unknown as { id: string };
      await client.feedback.submit({ id: prediction.id, label: { total: 26.22 }, notes: 'checked' });
      const read = await get<{ request_id: string; items: { notes: string; response: unknown }[] }>(
        `/v1/feedback/${prediction.id}?type=request`,
      );
      expect(read.status).toBe(200);
      expect(read.body.request_id).toBe(prediction.id);
      expect(read.body.items).toEqual([expect.objectContaining({ notes: 'checked', response: { total: 26.22 } })]);
      // Another organisation does not see the prediction at all: 404, not an empty list.
      expect((await get(`/v1/feedback/${prediction.id}?type=request`, otherKey)).status).toBe(404);
    });
  });

  describe('2. feedback on a chat', () => {
    it('is taken for a real session (submit, then read back) and refused for one the caller cannot read', async () => {
      const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1/compat`, maxRetries: 0 });
      const reply = await openai.chat.completions.create({
        model: 'prism-orion-1',
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Read this receipt' }, fileIdPart(receiptId)] },
        ] as OpenAI.Chat.ChatCompletionMessageParam[],
      });
      const sessionId = (reply as unknown as { session_id: string }).session_id;
      expect((await get(`/v1/chat/messages?session_id=${sessionId}`)).status).toBe(200);

      const submitted = await post<{ id: string; chat_id: string }>('/v1/feedback/submit', {
        request_id: null,
        agent_execution_id: null,
        chat_id: sessionId,
        notes: 'The reply should give the total.',
      });
      expect(submitted.status).toBe(200);
      expect(submitted.body.chat_id).toBe(sessionId);
      const read = await get<{ chat_id: string; items: { id: string; notes: string }[] }>(
        `/v1/feedback/${sessionId}?type=chat`,
      );
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ chat_id: sessionId, items: [{ id: submitted.body.id }] });

      // The other organisation cannot read the (private) chat, so it cannot give feedback on it either.
      const foreign = await post<ErrorBody>('/v1/feedback/submit', { chat_id: sessionId, notes: 'x' }, otherKey);
      expect(foreign.status).toBe(404);
      expect(foreign.body.detail.error.code).toBe('chat_not_found');
    });
  });

  describe('3. agents created without a name', () => {
    it('get a name made from the prompt, and can be executed by it', async () => {
      const created = await post<{ name: string; version: string }>('/v1/agent/create', {
        config: { prompt: 'Extract the receipt total and the store name', json_schema: RECEIPT_SCHEMA },
      });
      expect(created.status).toBe(200);
      expect(created.body.name).toBe('extract-receipt-total-store-name');
      expect(created.body.version).toMatch(/^\d{8}-[0-9a-f]{8}$/);
      const run = await execute({
        name: `${created.body.name}:${created.body.version}`,
        inputs: { receipt: { type: 'input_file', file_id: receiptId } },
      });
      expect(run).toMatchObject({ status: 'completed', name: `${created.body.name}:${created.body.version}` });

      const bare = await post<{ name: string }>('/v1/agent/create', { config: { json_schema: RECEIPT_SCHEMA } });
      expect(bare.status).toBe(200);
      expect(bare.body.name).toMatch(/^agent-[0-9a-f]{8}$/);
    });
  });

  describe('4. execution usage obeys cost = standard × multiplier, savings = their difference', () => {
    it.each([
      ['standard', 1],
      ['flex', 0.5],
      ['priority', 1.8],
    ])('a run on the local planner at %s costs nothing, and nothing is debited', async (tier, multiplier) => {
      const before = await balance('fidelity');
      const run = await execute({
        inputs: { receipt: { type: 'input_file', file_id: receiptId } },
        config: { json_schema: RECEIPT_SCHEMA, service_tier: tier },
      });
      expect(run.status).toBe('completed');
      // No model tokens and no unit rates: the $0.001 minimum is the chat-completion rule, not an execution's.
      expect(run.usage).toMatchObject({
        service_tier: tier,
        mode_multiplier: multiplier,
        standard_cost_dollars: 0,
        cost_dollars: 0,
        savings_dollars: 0,
      });
      expect(await balance('fidelity')).toBe(before);
    });
  });

  describe('7. executions record their steps', () => {
    it('on the record and as the steps.json artifact', async () => {
      const run = await execute({
        inputs: { receipt: { type: 'input_file', file_id: receiptId } },
        config: { json_schema: RECEIPT_SCHEMA },
      });
      expect(run.steps.map((s) => `${s.kind}:${s.kind === 'tool' ? s.name : 'plan'}`)).toEqual([
        'plan:plan',
        'tool:ocr_image',
        'plan:plan',
        'tool:fill_json_schema',
        'plan:plan',
      ]);
      expect(run.steps.map((s) => s.index)).toEqual([0, 1, 2, 3, 4]);
      expect(run.steps[1]?.arguments).toEqual({ image: receiptId });
      expect(run.usage.steps).toBe(run.steps.length);
      const fetched = await get<ExecutionWire>(`/v1/agent/executions/${run.id}`);
      expect(fetched.body.steps).toEqual(run.steps);

      const listed = await get<{ items: { filename: string; object_id: string }[] }>(
        `/v1/artifacts?execution_id=${run.id}`,
      );
      const stepsFile = listed.body.items.find((a) => a.filename === 'steps.json');
      expect(stepsFile).toBeDefined();
      const bytes = await call(`${app.url}/v1/artifacts?execution_id=${run.id}&filename=steps.json`, { key });
      expect(bytes.status).toBe(200);
      const steps = (await bytes.json()) as { name: string; output: Record<string, unknown> | null }[];
      expect(steps).toHaveLength(5);
      // The artifact has the tools' outputs whole (the OCR text), which the record leaves out.
      expect(JSON.stringify(steps[1]?.output)).toContain('GREENLEAF');
    });

    it('a failed run records the steps it took', async () => {
      // The image is read, then the schema cannot be filled: fill_json_schema is not among the run's tools.
      const run = await execute({
        inputs: { receipt: { type: 'input_file', file_id: receiptId } },
        config: { json_schema: RECEIPT_SCHEMA, tools: ['ocr_image'] },
      });
      expect(run.status).toBe('failed');
      expect(run.usage.message).toMatch(/fill_json_schema is not among the selected tools/);
      expect(run.steps.filter((s) => s.kind === 'tool').map((s) => s.name)).toEqual(['ocr_image']);
      const bytes = await call(`${app.url}/v1/artifacts?execution_id=${run.id}&filename=steps.json`, { key });
      expect(bytes.status).toBe(200);
      expect(((await bytes.json()) as unknown[]).length).toBe(run.steps.length);
    });
  });

  describe('8. the small ones', () => {
    it('a failed execution says its message once', async () => {
      const run = await execute({
        inputs: { receipt: { type: 'input_file', file_id: receiptId } },
        config: { prompt: 'Summarize this receipt' },
      });
      expect(run.status).toBe('failed');
      const message = run.usage.message ?? '';
      const sentences = message.split(/(?<=\.)\s+/).filter(Boolean);
      expect(new Set(sentences).size).toBe(sentences.length);
      expect(message.match(/PRISM_MODELS_FILE/g)).toHaveLength(1);
    });

    it('url_not_allowed names the setting that allows private addresses', async () => {
      const res = await post<ErrorBody>('/v1/document/generate', {
        url: 'http://127.0.0.1:9/invoice.pdf',
        domain: 'document.invoice',
        batch: false,
      });
      expect(res.status).toBe(400);
      expect(res.body.detail.error.code).toBe('url_not_allowed');
      expect(res.body.detail.error.message).toContain('PRISM_ALLOW_PRIVATE_URLS=1');
    });

    it('an unknown domain suggests the full name it may mean (SDK)', async () => {
      const attempt = client.image.generate({
        images: [`data:image/png;base64,${renderReceiptImage().toString('base64')}`],
        domain: 'receipt',
      });
      await expect(attempt).rejects.toMatchObject({ http_status: 404 });
      await expect(attempt).rejects.toThrow(/did you mean 'document\.receipt'/);
      const hub = await post<ErrorBody>('/v1/hub/schema', { domain: 'invoice' });
      expect(hub.status).toBe(404);
      expect(hub.body.detail.error.message).toMatch(/did you mean 'document\.invoice'/);
    });

    it('an image request takes images, file_id or url, and one with none names all three', async () => {
      const none = await post<ErrorBody>('/v1/image/generate', { domain: 'document.receipt' });
      expect(none.status).toBe(400);
      expect(none.body.detail.error).toMatchObject({ code: 'missing_input' });
      expect(none.body.detail.error.message).toMatch(/`images`, `file_id` or `url`/);
      const byId = await post<{ status: string; response: { merchant_name?: string } }>('/v1/image/generate', {
        file_id: receiptId,
        domain: 'document.receipt',
      });
      expect(byId.status).toBe(201);
      expect(byId.body.status).toBe('completed');
    });

    it('a generation setting sent at the top level is refused, and honoured in config', async () => {
      const pdf = await makeTextPdf([['Page one: ACME LTD'], ['Page two: Invoice Number: INV-77'], ['Page three']]);
      const uploaded = await uploadFile(app.url, key, pdf, { filename: 'three.pdf' });
      const fileId = ((await uploaded.json()) as { id: string }).id;
      const misplaced = await post<{ detail: { type: string; loc: string[]; msg: string }[] }>(
        '/v1/document/generate',
        { file_id: fileId, domain: 'document.invoice', batch: false, page_indices: [1] },
      );
      expect(misplaced.status).toBe(422);
      expect(misplaced.body.detail[0]).toMatchObject({ type: 'extra_forbidden', loc: ['body', 'page_indices'] });
      expect(misplaced.body.detail[0]?.msg).toContain('config.page_indices');
      const honoured = await post<{ usage: { elements_processed: number }; response: Record<string, unknown> }>(
        '/v1/document/generate',
        { file_id: fileId, domain: 'document.invoice', batch: false, config: { page_indices: [1] } },
      );
      expect(honoured.status).toBe(201);
      expect(honoured.body.usage.elements_processed).toBe(1);
      expect(JSON.stringify(honoured.body.response)).toContain('INV-77');
      expect(JSON.stringify(honoured.body.response)).not.toContain('ACME');
    });

    it('generate answers the spec’s statuses: image and document 201, video and audio 200, schema routes 201', async () => {
      const upload = async (bytes: Buffer, filename: string) =>
        ((await (await uploadFile(app.url, key, bytes, { filename })).json()) as { id: string }).id;
      const video = await upload(await makeVideo([{ durationS: 1, color: 'white', text: ['HELLO'] }]), 'v.mp4');
      const audio = await upload(await makeSpeechLike(2, [[0.5, 1.5]], { container: 'wav' }), 'a.wav');
      const pdf = await upload(await makeTextPdf([['ACME LTD', 'Invoice Number: INV-1']]), 'i.pdf');
      const requests: Record<string, { file_id: string; domain: string }> = {
        image: { file_id: receiptId, domain: 'document.receipt' },
        document: { file_id: pdf, domain: 'document.invoice' },
        video: { file_id: video, domain: 'video.transcription' },
        audio: { file_id: audio, domain: 'audio.transcription' },
      };
      const statuses: Record<string, number> = {};
      for (const [kind, body] of Object.entries(requests)) {
        const res = await call(`${app.url}/v1/${kind}/generate`, { key, json: { ...body, batch: true } });
        statuses[kind] = res.status;
      }
      statuses.image_schema = (await call(`${app.url}/v1/image/schema`, { key, json: { images: [] } })).status;
      expect(statuses).toEqual({ image: 201, document: 201, video: 200, audio: 200, image_schema: 422 });
      const schema = await call(`${app.url}/v1/document/schema`, { key, json: { file_id: receiptId } });
      expect(schema.status).toBe(201);
    });

    it('a skill made from a chat is named and described after the chat, quotes balanced', async () => {
      const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1/compat`, maxRetries: 0 });
      const reply = await openai.chat.completions.create({
        model: 'prism-orion-1',
        messages: [
          {
            role: 'user',
            content: [{ type: 'text', text: 'Which store issued this receipt?' }, fileIdPart(receiptId)],
          },
        ] as OpenAI.Chat.ChatCompletionMessageParam[],
      });
      const sessionId = (reply as unknown as { session_id: string }).session_id;
      const created = await post<{ name: string; description: string }>('/v1/skills/create', {
        session_id: sessionId,
      });
      expect(created.status).toBe(201);
      expect(created.body.name).toBe('which-store-issued-this-receipt');
      expect(created.body.description).toContain('"Which store issued this receipt?"');
      expect((created.body.description.match(/"/g) ?? []).length % 2).toBe(0);
    });
  });
});

/** A chat content part naming an uploaded file (the shape the OpenAI SDK types as `file`). */
function fileIdPart(fileId: string) {
  return { type: 'file', file: { file_id: fileId } };
}
