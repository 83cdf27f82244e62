/**
 * What the `vlmrun` npm SDK expects of the main API, found by running it: `document.schema()` proposes a schema
 * for an uploaded PDF as a Prediction, background work is first `pending`, the schema endpoints take only the
 * structured model, and a wrong key is refused on the open hub routes instead of being served as anonymous.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { VlmRun } from 'vlmrun';
import { makeTextPdf, renderReceiptImage } from '../helpers/media-fixtures';
import { call, startTestApp, type TestApp } from '../helpers/test-app';

interface Prediction {
  id: string;
  status: string;
  model: string;
  response: Record<string, unknown> | null;
  usage: Record<string, unknown>;
}

interface ProposedSchema {
  domain: string;
  schema_hash: string;
  gql_stmt: string;
  json_schema: { type: string; properties: Record<string, unknown> };
}

describe('vlmrun SDK on the main API', () => {
  let app: TestApp;
  let key: string;
  let client: VlmRun;
  let workDir: string;
  let invoiceFileId: string;

  beforeAll(async () => {
    app = await startTestApp();
    key = await app.createKey('sdk-schema', 'pro');
    client = new VlmRun({ apiKey: key, baseURL: `${app.url}/v1` });
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-vlmrun-'));
    const pdf = path.join(workDir, 'invoice.pdf');
    fs.writeFileSync(
      pdf,
      await makeTextPdf([
        [
          'ACME SUPPLIES LTD',
          'Invoice Number: INV-2024-0042',
          'Invoice Date: 2024-05-02',
          'Subtotal: 1,000.00',
          'Total Due: 1,250.00',
        ],
      ]),
    );
    invoiceFileId = (await client.files.upload({ filePath: pdf, purpose: 'vision' })).id;
  });
  afterAll(async () => {
    fs.rmSync(workDir, { recursive: true, force: true });
    await app.close();
  });

  it('document.schema() proposes a schema for a PDF, answered as a completed Prediction', async () => {
    const proposed = (await client.document.schema({ fileId: invoiceFileId })) as unknown as Prediction;
    expect(proposed).toMatchObject({ status: 'completed', model: 'prism-1' });
    const schema = proposed.response as unknown as ProposedSchema;
    expect(schema.schema_hash).toMatch(/^[0-9a-f]{8}$/);
    expect(schema.gql_stmt).toBe('');
    expect(schema.json_schema.type).toBe('object');
    // The proposal comes from what the document prints: its invoice number and total are fields of it.
    expect(Object.keys(schema.json_schema.properties)).toEqual(
      expect.arrayContaining([expect.stringMatching(/invoice/), expect.stringMatching(/total/)]),
    );
    expect(proposed.usage).toMatchObject({ element_type: 'page', elements_processed: 1 });

    const again = (await client.predictions.get(proposed.id)) as unknown as Prediction;
    expect(again.response).toEqual(proposed.response);
  });

  it('document/schema refuses a request with no input, and an unknown file, storing nothing', async () => {
    const before = ((await (await call(`${app.url}/v1/predictions?limit=1000`, { key })).json()) as unknown[]).length;
    const none = await call(`${app.url}/v1/document/schema`, { key, json: {} });
    expect(none.status).toBe(400);
    expect(await none.json()).toMatchObject({ detail: { error: { code: 'missing_input' } } });
    const unknown = await call(`${app.url}/v1/document/schema`, { key, json: { file_id: 'nope' } });
    expect(unknown.status).toBe(404);
    const after = ((await (await call(`${app.url}/v1/predictions?limit=1000`, { key })).json()) as unknown[]).length;
    expect(after).toBe(before);
  });

  it.each(['/v1/image/schema', '/v1/document/schema'])(
    '%s takes only the structured model (prism-1 or the SDK id vlm-1); another model is a 422',
    async (route) => {
      const input =
        route === '/v1/image/schema'
          ? { images: [`data:image/png;base64,${renderReceiptImage().toString('base64')}`] }
          : { file_id: invoiceFileId };
      const res = await call(`${app.url}${route}`, { key, json: { ...input, model: 'prism-orion-1' } });
      expect(res.status).toBe(422);
      expect(await res.json()).toMatchObject({
        detail: [{ type: 'enum', loc: ['body', 'model'], input: 'prism-orion-1' }],
      });
      const sdkId = await call(`${app.url}${route}`, { key, json: { ...input, model: 'vlm-1' } });
      expect(sdkId.status).toBe(201);
      expect(await sdkId.json()).toMatchObject({ status: 'completed', model: 'prism-1' });
    },
  );

  it('returns background work as pending first, then it moves on to completed', async () => {
    const accepted = (await client.document.generate({
      fileId: invoiceFileId,
      model: 'prism-1',
      domain: 'document.invoice',
      batch: true,
    })) as unknown as Prediction;
    expect(accepted.status).toBe('pending');
    expect(accepted.response).toBeNull();
    const done = (await client.predictions.wait(accepted.id, 60, 0.2)) as unknown as Prediction;
    expect(done.status).toBe('completed');
    expect(done.response).toMatchObject({ invoice_id: 'INV-2024-0042' });
  });

  it('records every status a background prediction passes through', async () => {
    const store = app.container.stores.predictions;
    const seen: string[] = [];
    const transition = store.transition.bind(store);
    store.transition = async (id, from, to, update) => {
      const moved = await transition(id, from, to, update);
      if (moved) seen.push(moved.status);
      return moved;
    };
    try {
      const res = await call(`${app.url}/v1/document/schema`, { key, json: { file_id: invoiceFileId, batch: true } });
      const accepted = (await res.json()) as Prediction;
      expect(accepted.status).toBe('pending');
      const done = (await client.predictions.wait(accepted.id, 60, 0.2)) as unknown as Prediction;
      expect(done.response).toMatchObject({ json_schema: { type: 'object' } });
      expect(seen).toEqual(['enqueued', 'running', 'completed']);
    } finally {
      store.transition = transition;
    }
  });

  it('a keyed call with a wrong key to a hub route fails instead of being served as anonymous', async () => {
    const wrong = new VlmRun({ apiKey: 'prism_wrong', baseURL: `${app.url}/v1` });
    await expect(wrong.hub.listDomains()).rejects.toThrow(/401|Invalid API Key/);
    await expect(wrong.hub.getSchema({ domain: 'document.invoice' })).rejects.toThrow(/401|Invalid API Key/);
    await expect(wrong.models.list()).rejects.toMatchObject({ http_status: 401 });
    const anonymous = new VlmRun({ apiKey: '', baseURL: `${app.url}/v1` });
    expect((await anonymous.hub.listDomains()).length).toBeGreaterThan(0);
  });
});
