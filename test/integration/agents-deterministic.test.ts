/**
 * Agent executions with no upstream model: the deterministic planner reads images, PDFs and audio with the
 * embedded engines, fills the requested schema, says in usage.message that no language model planned the run, and
 * refuses tasks that need language understanding with a message naming the setting to configure.
 */
import { makeTextPdf, renderReceiptImage } from '../helpers/media-fixtures';
import { makeSpeechLike } from '../helpers/media-clips';
import { call, startTestApp, uploadFile, type TestApp } from '../helpers/test-app';

interface ExecutionWire {
  id: string;
  name: string;
  status: string;
  execution_mode: string;
  response: Record<string, unknown> | null;
  usage: Record<string, unknown>;
  created_at: string;
  completed_at: string | null;
}

const RECEIPT_SCHEMA = {
  type: 'object',
  properties: {
    company: { type: ['string', 'null'], description: 'the issuing business as printed' },
    total: { type: ['string', 'number', 'null'], description: 'the final amount paid' },
  },
  required: ['company', 'total'],
};

describe('agent executions with the deterministic planner', () => {
  let app: TestApp;
  let key: string;

  beforeAll(async () => {
    app = await startTestApp();
    key = await app.createKey('agents-det');
    await app.container.services.accounts.addCredits('agents-det', 5);
  });
  afterAll(() => app.close());

  const execute = async (body: unknown): Promise<{ status: number; body: ExecutionWire }> => {
    const res = await call(`${app.url}/v1/agent/execute`, { key, json: body });
    return { status: res.status, body: (await res.json()) as ExecutionWire };
  };

  it('reads an image with OCR and fills the schema, saying no language model planned it', async () => {
    const png = renderReceiptImage();
    const { status, body } = await execute({
      inputs: { receipt: { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } } },
      config: { prompt: 'Extract the receipt fields', json_schema: RECEIPT_SCHEMA },
    });
    expect(status).toBe(200);
    expect(body.status).toBe('completed');
    expect(body.execution_mode).toBe('agent');
    expect(typeof body.name).toBe('string');
    expect(body.response?.company).toMatch(/GREENLEAF/);
    expect(String(body.response?.total)).toContain('26.22');
    expect(body.usage).toMatchObject({ element_type: 'image', elements_processed: 1, service_tier: 'standard' });
    expect(body.usage.steps).toBe(5); // plan, ocr_image, plan, fill_json_schema, plan
    expect(body.usage.message).toMatch(/No language model planned this run/);
    expect(body.usage.message).toMatch(/PRISM_MODELS_FILE/);
    expect(body.created_at).toMatch(/Z$/);

    // The OCR layout is an artifact of the execution; the input image too.
    const listed = await call(`${app.url}/v1/artifacts?execution_id=${body.id}`, { key });
    const page = (await listed.json()) as { items: { object_id: string; mime_type: string }[] };
    expect(page.items.map((i) => i.object_id)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^img_/), expect.stringMatching(/^lay_/)]),
    );
    const image = page.items.find((i) => i.object_id.startsWith('img_'));
    const bytes = await call(`${app.url}/v1/artifacts?object_id=${image?.object_id}&execution_id=${body.id}`, { key });
    expect(bytes.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await bytes.arrayBuffer()).equals(png)).toBe(true);
  });

  it('reads an uploaded PDF page by page', async () => {
    const pdf = await makeTextPdf([['ACME SUPPLIES LTD', 'Invoice Number: INV-2291', 'Total Due: 1,250.00']]);
    const uploaded = (await (await uploadFile(app.url, key, pdf, { filename: 'inv.pdf' })).json()) as { id: string };
    const { body } = await execute({
      inputs: { invoice: { type: 'input_file', file_id: uploaded.id } },
      config: {
        json_schema: {
          type: 'object',
          properties: {
            invoice_number: { type: ['string', 'null'] },
            total_due: { type: ['string', 'number', 'null'] },
          },
        },
      },
    });
    expect(body.status).toBe('completed');
    expect(body.response?.invoice_number).toBe('INV-2291');
    expect(body.usage).toMatchObject({ element_type: 'page', elements_processed: 1 });
  });

  it('probes audio for speech segments and never invents a transcript', async () => {
    const wav = await makeSpeechLike(4, [
      [0.5, 1.5],
      [2.2, 3.4],
    ]);
    const uploaded = (await (await uploadFile(app.url, key, wav, { filename: 'clip.wav' })).json()) as { id: string };
    const { body } = await execute({ inputs: { clip: { type: 'input_file', file_id: uploaded.id } } });
    expect(body.status).toBe('completed');
    const clip = body.response?.clip as { speech_segments: unknown[]; transcript: null; transcript_message: string };
    expect(clip.speech_segments.length).toBeGreaterThan(0);
    expect(clip.transcript).toBeNull();
    expect(body.usage).toMatchObject({ element_type: 'audio', elements_processed: 1 });
  });

  it('refuses a task that needs language understanding, naming the setting', async () => {
    const png = renderReceiptImage();
    const { body } = await execute({
      inputs: { receipt: `data:image/png;base64,${png.toString('base64')}` },
      config: { prompt: 'Summarize what this customer bought and recommend a healthier alternative' },
    });
    expect(body.status).toBe('failed');
    expect(body.response).toBeNull();
    expect(body.usage.message).toMatch(/needs a language model/);
    expect(body.usage.message).toMatch(/PRISM_MODELS_FILE/);
    expect(body.completed_at).not.toBeNull();
  });

  it('rejects unknown tools, bad schemas and unknown models before storing anything', async () => {
    const before = ((await (await call(`${app.url}/v1/agent/executions?limit=1000`, { key })).json()) as unknown[])
      .length;
    const tools = await execute({ inputs: {}, config: { prompt: 'x', tools: ['ocr_image', 'teleport'] } });
    expect(tools.status).toBe(400);
    expect(JSON.stringify(tools.body)).toContain('teleport');
    const schema = await execute({ inputs: {}, config: { json_schema: { type: 'nonsense' } } });
    expect(schema.status).toBe(400);
    const model = await execute({ model: 'gpt-9', inputs: {}, config: { prompt: 'x' } });
    expect(model.status).toBe(404);
    const after = ((await (await call(`${app.url}/v1/agent/executions?limit=1000`, { key })).json()) as unknown[])
      .length;
    expect(after).toBe(before);
  });
});
