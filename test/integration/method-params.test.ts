/**
 * `method_params` on the embedded methods, through the `openai` SDK: the parameters a method reads change what it
 * returns, and anything else is refused with 400 `capability_violation` naming it, never ignored.
 */
import OpenAI, { APIError } from 'openai';
import { makeTextPdf, renderReceiptImage } from '../helpers/media-fixtures';
import { startTestApp, type TestApp } from '../helpers/test-app';

type Json = Record<string, unknown>;

describe('method_params on prism-1', () => {
  let app: TestApp;
  let client: OpenAI;
  let pdfUrl: string;
  let imageUrl: string;

  beforeAll(async () => {
    app = await startTestApp();
    client = new OpenAI({
      apiKey: await app.createKey('methods', 'pro'),
      baseURL: `${app.url}/v1/compat`,
      maxRetries: 0,
    });
    await app.container.services.accounts.addCredits('methods', 5);
    const pdf = await makeTextPdf([
      ['FIRST PAGE', 'Invoice Number: INV-1'],
      ['SECOND PAGE', 'Total Due: 99.00'],
      ['THIRD PAGE', 'Thank you'],
    ]);
    pdfUrl = `data:application/pdf;base64,${pdf.toString('base64')}`;
    imageUrl = `data:image/png;base64,${renderReceiptImage().toString('base64')}`;
  });
  afterAll(() => app.close());

  const ask = async (url: string, extra: Json): Promise<Json> => {
    const kind = url.startsWith('data:application/pdf') ? 'document_url' : 'image_url';
    const reply = await client.chat.completions.create({
      model: 'prism-1',
      messages: [{ role: 'user', content: [{ type: kind, [kind]: { url } }] }],
      ...extra,
    } as never);
    return JSON.parse((reply as OpenAI.ChatCompletion).choices[0]?.message.content ?? 'null') as Json;
  };

  /** The SDK error a call fails with (fails the test if it succeeded). */
  const sdkError = async (promise: Promise<unknown>): Promise<APIError> => {
    try {
      await promise;
    } catch (error) {
      if (error instanceof APIError) return error;
      throw error;
    }
    throw new Error('expected a refusal');
  };
  const refusal = (url: string, extra: Json): Promise<APIError> => sdkError(ask(url, extra));

  it('ocr reads only the pages page_indices names', async () => {
    const all = await ask(pdfUrl, { method: 'ocr' });
    expect((all.pages as Json[]).map((p) => p.page_index)).toEqual([0, 1, 2]);
    const some = await ask(pdfUrl, { method: 'ocr', method_params: { page_indices: [1] } });
    expect(some).toMatchObject({ method: 'ocr', type: 'document.ocr.page' });
    expect(some.pages).toEqual([
      { page_index: 1, status: 'ok', content: expect.stringContaining('SECOND PAGE') as unknown },
    ]);
  });

  it('extract adds confidence and grounding metadata when method_params asks', async () => {
    const schema = { type: 'object', properties: { total: { type: 'number' } } };
    const format = { type: 'json_schema', json_schema: { name: 'r', schema } };
    const plain = await ask(imageUrl, { response_format: format });
    expect(plain).toEqual({ total: 26.22 });
    const rich = await ask(imageUrl, { response_format: format, method_params: { confidence: true, grounding: true } });
    expect(rich.total).toBe(26.22);
    expect(rich.total_metadata).toMatchObject({
      confidence: expect.stringMatching(/^(hi|med|low)$/) as unknown,
      bboxes: [expect.objectContaining({ page: 0 })],
    });
  });

  it.each([
    ['a parameter no method reads', { method: 'ocr', method_params: { language: 'de' } }, 'method_params.language'],
    ['extract-only flags on ocr', { method: 'ocr', method_params: { confidence: true } }, 'method_params.confidence'],
    [
      'page_indices on an image',
      { method: 'text', method_params: { page_indices: [0] } },
      'method_params.page_indices',
    ],
  ])('refuses %s with 400 capability_violation naming it', async (_label, extra, param) => {
    const err = await refusal(imageUrl, extra);
    expect([err.status, err.code, err.param]).toEqual([400, 'capability_violation', param]);
    expect(err.message).toContain(param);
  });

  it('refuses method_params on a model without methods, and badly typed values with 422', async () => {
    const orion = await sdkError(
      client.chat.completions.create({
        model: 'prism-orion-1',
        messages: [{ role: 'user', content: 'hi' }],
        method_params: {},
      } as never),
    );
    expect([orion.status, orion.code, orion.param]).toEqual([400, 'capability_violation', 'method_params']);
    const typed = await refusal(pdfUrl, { method: 'ocr', method_params: { page_indices: 'all' } });
    expect([typed.status, typed.param]).toEqual([422, 'method_params.page_indices']);
  });
});
