/**
 * `prism-1` with an assisting vision-language model (`PRISM_EXTRACT_UPSTREAM_MODEL`, a model of the models file):
 * schema extraction of an image asks the scripted upstream with the image and the OCR text, and falls back to the
 * embedded extractor, from the same reading, when the model fails or answers off-schema.
 */
import { VlmRun } from 'vlmrun';
import { renderReceiptImage } from '../helpers/media-fixtures';
import { call, startTestApp } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

const SCHEMA = {
  type: 'object',
  properties: { company: { type: 'string' }, total: { type: 'number' } },
  required: ['company', 'total'],
  additionalProperties: false,
};

interface Prediction {
  status: string;
  model: string;
  response: Record<string, unknown>;
  usage: { message?: string | null; credits_used?: number };
}

describe('prism-1 with an assisting upstream model', () => {
  let lab: UpstreamApp;
  let key: string;
  const receipt = `data:image/png;base64,${renderReceiptImage().toString('base64')}`;

  beforeAll(async () => {
    lab = await startUpstreamApp(
      [
        {
          id: 'lab-vl',
          upstreamModel: 'qwen-vl',
          capabilities: { supported_input_types: ['text', 'image'], json_schema: true, max_images: 4 },
        },
      ],
      { env: { PRISM_EXTRACT_UPSTREAM_MODEL: 'lab-vl' } },
    );
    key = await lab.app.createKey('assist');
  });

  afterAll(async () => {
    await lab?.close();
  });

  const generate = async (): Promise<Prediction> => {
    const res = await call(`${lab.app.url}/v1/image/generate`, {
      key,
      json: { model: 'prism-1', images: [receipt], config: { json_schema: SCHEMA } },
    });
    expect(res.status).toBe(201);
    return (await res.json()) as Prediction;
  };

  it('asks the model with the image and the OCR text and returns its answer', async () => {
    lab.upstream.next({ kind: 'reply', content: '{"company": "GREENLEAF GROCERY LTD", "total": 26.22}' });
    const client = new VlmRun({ apiKey: key, baseURL: `${lab.app.url}/v1` });
    const prediction = (await client.image.generate({
      images: [receipt],
      model: 'prism-1',
      domain: 'document.receipt',
      config: { jsonSchema: SCHEMA },
    })) as unknown as Prediction;
    expect(prediction).toMatchObject({
      status: 'completed',
      model: 'prism-1',
      response: { company: 'GREENLEAF GROCERY LTD', total: 26.22 },
    });
    expect(prediction.usage.message).toMatch(/filled by lab-vl/);
    const sent = lab.upstream.requests.at(-1)?.body as {
      model: string;
      messages: { content: { type: string; text?: string }[] }[];
      response_format: { type: string };
    };
    expect(sent.model).toBe('qwen-vl');
    const parts = sent.messages[0]?.content ?? [];
    expect(parts.map((p) => p.type)).toEqual(['text', 'image_url', 'text']);
    // The OCR text rides along: the model sees what the embedded engines read.
    expect(parts[2]?.text).toMatch(/TOTAL\s+26\.22/);
    expect(sent.response_format.type).toBe('json_schema');
  });

  it('falls back to the embedded extractor when the model answers with no JSON', async () => {
    lab.upstream.next({ kind: 'reply', content: 'I could not read this receipt, sorry.' });
    const prediction = await generate();
    expect(prediction.status).toBe('completed');
    expect(prediction.response.total).toBe(26.22);
    expect(String(prediction.response.company)).toMatch(/GREENLEAF GROCERY/);
    expect(prediction.usage.message).toMatch(/lab-vl could not fill the schema \(its answer was not a JSON object\)/);
  });

  it('falls back when the model answers off-schema or the upstream fails, without saying more than that', async () => {
    lab.upstream.next({ kind: 'reply', content: '{"company": "GREENLEAF GROCERY LTD", "total": "about 26"}' });
    const offSchema = await generate();
    expect(offSchema.response.total).toBe(26.22);
    expect(offSchema.usage.message).toMatch(/did not match the schema \(\/total must be number\)/);

    lab.upstream.next({ kind: 'error', status: 500, body: { error: { message: 'GPU on fire at 10.0.0.7' } } });
    const failed = await generate();
    expect(failed.status).toBe('completed');
    expect(failed.response.total).toBe(26.22);
    expect(failed.usage.message).toMatch(/the upstream call failed/);
    expect(JSON.stringify(failed)).not.toMatch(/10\.0\.0\.7|GPU/);
  });
});

describe('PRISM_EXTRACT_UPSTREAM_MODEL naming no upstream model', () => {
  it('stops the server from starting, naming the setting', async () => {
    await expect(startTestApp({ PRISM_EXTRACT_UPSTREAM_MODEL: 'prism-1' })).rejects.toThrow(
      /PRISM_EXTRACT_UPSTREAM_MODEL names 'prism-1', which is not an upstream model/,
    );
  });
});
