/**
 * Structured extraction end to end on the embedded engines: the `vlmrun` SDK and raw HTTP against the running app,
 * on media the test makes (a rendered receipt, PDFs with and without a text layer, a short video and audio clip).
 */
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { VlmRun } from 'vlmrun';
import { makePdf, makeScannedPdf, makeTextPdf, renderReceiptImage, renderTextImage } from '../helpers/media-fixtures';
import { makeSpeechLike, makeVideo } from '../helpers/media-clips';
import { call, startTestApp, uploadFile, type TestApp } from '../helpers/test-app';
import { rawSql } from '../helpers/raw-sql';

const RECEIPT_SCHEMA = {
  type: 'object',
  properties: {
    company: { type: 'string', description: 'the issuing business as printed' },
    date: { type: 'string', description: 'the transaction date as printed' },
    total: { type: 'string', description: 'the final amount paid, as printed' },
  },
  required: ['company', 'date', 'total'],
};

interface Prediction {
  id: string;
  status: string;
  response: Record<string, unknown> | null;
  usage: Record<string, unknown>;
  completed_at: string | null;
  created_at: string;
}

describe('extraction', () => {
  let app: TestApp;
  let key: string;
  let client: VlmRun;
  let receiptDataUrl: string;
  let workDir: string;

  beforeAll(async () => {
    app = await startTestApp({ PRISM_ALLOW_PRIVATE_URLS: '1', PRISM_WEBHOOK_BACKOFF_MS: '20' });
    key = await app.createKey('extractors', 'pro');
    client = new VlmRun({ apiKey: key, baseURL: `${app.url}/v1` });
    receiptDataUrl = `data:image/png;base64,${renderReceiptImage().toString('base64')}`;
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-extract-'));
  });
  afterAll(async () => {
    fs.rmSync(workDir, { recursive: true, force: true });
    await app.close();
  });

  const post = async (route: string, json: unknown, k: string = key) => {
    const res = await call(`${app.url}${route}`, { key: k, json });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> & Prediction };
  };

  describe('hub', () => {
    it('serves info, domains and schemas without a key, through the SDK too', async () => {
      const open = new VlmRun({ apiKey: '', baseURL: `${app.url}/v1` });
      expect(await open.hub.info()).toEqual({ version: '2026-05-19.0' });
      const domains = await open.hub.listDomains();
      expect(domains.map((d) => d.domain)).toEqual(expect.arrayContaining(['document.invoice', 'document.receipt']));
      const schema = await open.hub.getSchema({ domain: 'document.receipt' });
      expect(schema).toMatchObject({ domain: 'document.receipt', schema_version: '2026-05-19.0', gql_stmt: '' });
      expect(schema.schema_hash).toMatch(/^[0-9a-f]{8}$/);
      expect(schema.json_schema).toMatchObject({ type: 'object', properties: { total: { type: 'number' } } });
    });

    it('answers the legacy catalogue routes and 404s unknown domains', async () => {
      const domains = (await (await call(`${app.url}/v1/domains`)).json()) as { domain: string }[];
      expect(domains.length).toBeGreaterThanOrEqual(31);
      const models = (await (await call(`${app.url}/v1/models`)).json()) as { model: string; domain: string }[];
      expect(models).toContainEqual({ model: 'prism-1', domain: 'document.invoice' });
      const legacy = await call(`${app.url}/v1/schema`, { json: { domain: 'document.invoice', config: {} } });
      expect(legacy.status).toBe(200);
      const missing = await call(`${app.url}/v1/hub/schema`, { json: { domain: 'document.nope' } });
      expect(missing.status).toBe(404);
      expect(await missing.json()).toMatchObject({ detail: { error: { code: 'domain_not_found' } } });
    });
  });

  describe('images', () => {
    it('extracts a receipt through the SDK with the domain schema', async () => {
      const prediction = (await client.image.generate({
        images: [receiptDataUrl],
        model: 'prism-1',
        domain: 'document.receipt',
      })) as unknown as Prediction;
      expect(prediction.status).toBe('completed');
      expect(prediction.response).toMatchObject({ total: 26.22 });
      expect(prediction.usage).toMatchObject({ elements_processed: 1, element_type: 'image', credits_used: 1 });
      expect(Number.isInteger(prediction.usage.credits_used)).toBe(true);
      expect(prediction.completed_at).not.toBeNull();
    });

    it('fills a caller schema, with confidence and grounding when asked', async () => {
      const { status, body } = await post('/v1/image/generate', {
        model: 'prism-1',
        domain: 'document.receipt',
        images: [receiptDataUrl],
        config: { json_schema: RECEIPT_SCHEMA, confidence: true, grounding: true },
      });
      expect(status).toBe(201);
      const response = body.response as Record<string, unknown>;
      expect(response.total).toBe('26.22');
      expect(String(response.company)).toMatch(/GREENLEAF GROCERY/);
      expect(response.date).toMatch(/14\/03\/2025/);
      const meta = response.total_metadata as {
        confidence: string;
        bboxes: { bbox: { xywh: number[] }; page: number }[];
      };
      expect(['hi', 'med', 'low']).toContain(meta.confidence);
      const [box] = meta.bboxes;
      expect(box?.page).toBe(0);
      for (const v of box?.bbox.xywh ?? []) expect(v).toBeGreaterThanOrEqual(0);
      expect((box?.bbox.xywh[1] ?? 0) > 0.5).toBe(true); // the total is in the lower half of the receipt
    });

    it('answers the SDK default model id (vlm-1) and proposes a schema from an image', async () => {
      const sdkDefault = (await client.image.generate({
        images: [receiptDataUrl],
        domain: 'document.receipt',
      })) as unknown as Prediction;
      expect(sdkDefault.status).toBe('completed');
      const proposed = (await client.image.schema({ images: [receiptDataUrl] })) as unknown as Prediction;
      expect(proposed.status).toBe('completed');
      expect(proposed.response?.schema_hash).toMatch(/^[0-9a-f]{8}$/);
      expect(proposed.response?.gql_stmt).toBe('');
      expect((proposed.response?.json_schema as { type: string }).type).toBe('object');
    });

    it('refuses bad input with the spec codes and stores nothing', async () => {
      const before = ((await (await call(`${app.url}/v1/predictions?limit=1000`, { key })).json()) as unknown[]).length;
      const two = await post('/v1/image/generate', {
        domain: 'document.receipt',
        images: [receiptDataUrl, receiptDataUrl],
      });
      expect(two.status).toBe(400);
      expect(two.body).toMatchObject({ detail: { error: { code: 'too_many_inputs', param: 'images' } } });
      const garbage = await post('/v1/image/generate', { domain: 'document.receipt', images: ['not base64 !!'] });
      expect(garbage.body).toMatchObject({ detail: { error: { code: 'invalid_media' } } });
      const notImage = await post('/v1/image/generate', {
        domain: 'document.receipt',
        images: [Buffer.from('hello, not an image').toString('base64')],
      });
      expect(notImage.status).toBe(400);
      expect(notImage.body).toMatchObject({ detail: { error: { code: 'invalid_media' } } });
      const pdfAsImage = await post('/v1/image/generate', {
        domain: 'document.receipt',
        images: [`data:application/pdf;base64,${Buffer.from('%PDF-1.7 not an image').toString('base64')}`],
      });
      expect(pdfAsImage.status).toBe(400);
      expect(pdfAsImage.body).toMatchObject({ detail: { error: { code: 'invalid_media' } } });
      const rawDataUrl = await post('/v1/image/generate', {
        domain: 'document.receipt',
        images: ['data:image/png,rawbytes'],
      });
      expect(rawDataUrl.body).toMatchObject({ detail: { error: { code: 'invalid_media', param: 'images.0' } } });
      const noDomain = await post('/v1/image/generate', { images: [receiptDataUrl], domain: 'document.unknown' });
      expect(noDomain.status).toBe(404);
      const badSchema = await post('/v1/image/generate', {
        images: [receiptDataUrl],
        config: { json_schema: { type: 'object', properties: { a: { type: 'nonsense' } } } },
      });
      expect(badSchema.body).toMatchObject({
        detail: { error: { code: 'schema_invalid', param: 'config.json_schema' } },
      });
      // No input at all: `images`, `file_id` and `url` are all accepted, so the refusal names the three.
      const missing = await post('/v1/image/generate', { domain: 'document.receipt' });
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({ detail: { error: { code: 'missing_input' } } });
      const after = ((await (await call(`${app.url}/v1/predictions?limit=1000`, { key })).json()) as unknown[]).length;
      expect(after).toBe(before);
    });
  });

  describe('documents', () => {
    it('reads a text PDF and a scanned PDF through file ids, and runs batch work in the queue', async () => {
      const textPdf = path.join(workDir, 'invoice.pdf');
      fs.writeFileSync(
        textPdf,
        await makeTextPdf([
          ['ACME SUPPLIES LTD', 'Invoice Number: INV-2024-0042', 'Invoice Date: 2024-05-02', 'Total Due: 1,250.00'],
          ['Terms: 30 days', 'Thank you for your business'],
        ]),
      );
      const file = await client.files.upload({ filePath: textPdf, purpose: 'vision' });
      const sync = (await client.document.generate({
        fileId: file.id,
        model: 'prism-1',
        domain: 'document.invoice',
        batch: false,
      })) as unknown as Prediction;
      expect(sync.status).toBe('completed');
      expect(sync.usage).toMatchObject({ element_type: 'page', elements_processed: 2, credits_used: 2 });
      expect(sync.response).toMatchObject({ invoice_id: 'INV-2024-0042' });

      const scanned = path.join(workDir, 'scan.pdf');
      fs.writeFileSync(scanned, await makeScannedPdf(renderReceiptImage()));
      const scanFile = await client.files.upload({ filePath: scanned, purpose: 'vision' });
      const queued = (await client.document.generate({
        fileId: scanFile.id,
        model: 'prism-1',
        domain: 'document.receipt',
        batch: true,
      })) as unknown as Prediction;
      expect(queued.status).toBe('pending');
      const done = (await client.predictions.wait(queued.id, 60, 0.2)) as unknown as Prediction;
      expect(done.response).toMatchObject({ total: 26.22 });
      expect(done.usage).toMatchObject({ element_type: 'page', elements_processed: 1 });
    });

    it('returns the pages that worked, and 502 without billing when every page failed', async () => {
      // A scan declared at 10 dpi is a page of 200 x 200 inches: rendering it at 150 dpi is refused (rule 7).
      const huge = { png: renderTextImage(['TOO BIG'], { width: 2000, height: 2000 }), dpi: 10 };
      const mixed = await makePdf([{ lines: ['Invoice Number: MIX-1', 'Total Due: 5.00'] }, huge]);
      const mixedId = (
        (await (await uploadFile(app.url, key, mixed, { filename: 'mixed.pdf' })).json()) as { id: string }
      ).id;
      const partial = await post('/v1/document/generate', {
        file_id: mixedId,
        domain: 'document.invoice',
        batch: false,
      });
      expect(partial.status).toBe(201);
      expect(partial.body.usage).toMatchObject({ elements_processed: 1, credits_used: 1 });
      expect(String(partial.body.usage.message)).toMatch(/1 of 2 pages failed.*lower document_dpi/);

      const broken = await makePdf([huge]);
      const brokenId = (
        (await (await uploadFile(app.url, key, broken, { filename: 'broken.pdf' })).json()) as { id: string }
      ).id;
      const failed = await post('/v1/document/generate', {
        file_id: brokenId,
        domain: 'document.invoice',
        batch: false,
      });
      expect(failed.status).toBe(502);
      expect(failed.body).toMatchObject({ error: { code: 'all_pages_failed', type: 'upstream_error' } });
      const [latest] = (await (await call(`${app.url}/v1/predictions?limit=1`, { key })).json()) as Prediction[];
      expect(latest).toMatchObject({ status: 'failed', usage: { credits_used: 0 } });
    });

    it('rejects a corrupt PDF as invalid_document', async () => {
      const res = await uploadFile(app.url, key, Buffer.from('%PDF-1.7\n garbage garbage'), { filename: 'bad.pdf' });
      const { id } = (await res.json()) as { id: string };
      const { status, body } = await post('/v1/document/generate', {
        file_id: id,
        domain: 'document.invoice',
        batch: false,
      });
      expect(status).toBe(400);
      expect(body).toMatchObject({ detail: { error: { code: 'invalid_document' } } });
    });
  });

  describe('video and audio', () => {
    it('reads on-screen text of a video and locates speech in audio without inventing words', async () => {
      const video = await makeVideo(
        [
          { durationS: 2, color: 'white', text: ['QUARTERLY REPORT'] },
          { durationS: 2, color: 'white', text: ['REVENUE UP 12 PERCENT'] },
        ],
        { width: 640, height: 360 },
      );
      const videoFile = (await (await uploadFile(app.url, key, video, { filename: 'clip.mp4' })).json()) as {
        id: string;
      };
      const v = await post('/v1/video/generate', {
        file_id: videoFile.id,
        domain: 'video.transcription',
        batch: false,
        config: { video_fps: 1 },
      });
      expect(v.status).toBe(200);
      expect(v.body.status).toBe('completed');
      const segments = (v.body.response as { segments: { video: { content: string | null } }[] }).segments;
      expect(segments.map((s) => s.video.content ?? '').join(' ')).toMatch(/QUARTERLY REPORT/);

      const audio = await makeSpeechLike(
        4,
        [
          [0.5, 1.5],
          [2.5, 3.5],
        ],
        { container: 'wav' },
      );
      const audioFile = (await (await uploadFile(app.url, key, audio, { filename: 'voice.wav' })).json()) as {
        id: string;
      };
      const a = await post('/v1/audio/generate', {
        file_id: audioFile.id,
        domain: 'audio.transcription',
        batch: false,
      });
      expect(a.status).toBe(200);
      const response = a.body.response as { metadata: { duration: number }; segments: { content: null }[] };
      expect(response.metadata.duration).toBeCloseTo(4, 0);
      expect(response.segments.every((s) => s.content === null)).toBe(true);
      expect(String(a.body.usage.message)).toMatch(/upstream speech model/);
      const tooMany = await post('/v1/video/generate', { file_id: videoFile.id, config: { video_max_frames: 100000 } });
      expect(tooMany.status).toBe(400);
    });
  });

  describe('predictions, feedback and webhooks', () => {
    let predictionId: string;

    beforeAll(async () => {
      const { body } = await post('/v1/image/generate', {
        domain: 'document.receipt',
        images: [renderTextImage(['TOTAL 9.99']).toString('base64')],
      });
      predictionId = body.id;
    });

    it('lists and gets predictions of the caller only', async () => {
      const page = (await client.predictions.list({ skip: 0, limit: 2 })) as unknown as Prediction[];
      expect(page).toHaveLength(2);
      const one = (await client.predictions.get(predictionId)) as unknown as Prediction;
      expect(one.id).toBe(predictionId);
      const domain = (await (await call(`${app.url}/v1/predictions/${predictionId}/domain`, { key })).json()) as Record<
        string,
        unknown
      >;
      expect(domain.domain).toBe('document.receipt');
      expect(domain.schema_hash).toMatch(/^[0-9a-f]{8}$/);
      const stranger = await app.createKey('strangers');
      const hidden = await call(`${app.url}/v1/predictions/${predictionId}`, { key: stranger });
      expect(hidden.status).toBe(404);
      expect(await hidden.json()).toMatchObject({ detail: { error: { code: 'prediction_not_found' } } });
      const bounds = await call(`${app.url}/v1/predictions?limit=1001`, { key });
      expect(bounds.status).toBe(422);
    });

    it('takes feedback through the SDK and the current route, and lists it', async () => {
      const legacy = (await client.feedback.submit({
        id: predictionId,
        label: { total: 9.99 },
        notes: 'checked',
      })) as unknown as Record<string, unknown>;
      expect(legacy).toMatchObject({ request_id: predictionId, response: { total: 9.99 } });
      const current = await post('/v1/feedback/submit', {
        request_id: predictionId,
        agent_execution_id: null,
        chat_id: null,
        notes: 'second look',
      });
      expect(current.status).toBe(200);
      const both = await post('/v1/feedback/submit', { request_id: predictionId, chat_id: 'c1', notes: 'x' });
      expect(both.status).toBe(400);
      const empty = await post('/v1/feedback/submit', { request_id: predictionId });
      expect(empty.status).toBe(400);
      const unknown = await post('/v1/feedback/submit', { request_id: 'nope', notes: 'x' });
      expect(unknown.status).toBe(404);
      const list = (await (
        await call(`${app.url}/v1/feedback/${predictionId}?type=request&limit=1`, { key })
      ).json()) as {
        request_id: string;
        items: { notes: string }[];
      };
      expect(list.request_id).toBe(predictionId);
      expect(list.items.map((i) => i.notes)).toEqual(['second look']);
    });

    it('calls the callback URL with a signed record, retrying a failing receiver', async () => {
      const received: { body: string; signature: string }[] = [];
      let calls = 0;
      const receiver = http.createServer((req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          calls += 1;
          if (calls === 1) {
            res.statusCode = 503;
            res.end();
            return;
          }
          received.push({ body, signature: String(req.headers['x-prism-signature']) });
          res.end('ok');
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
        const { body } = await post('/v1/image/generate', {
          domain: 'document.receipt',
          images: [receiptDataUrl],
          callback_url: url,
        });
        await app.container.webhooks.idle();
        expect(received).toHaveLength(1);
        const delivered = JSON.parse(received[0]?.body ?? '{}') as Prediction;
        expect(delivered).toMatchObject({ id: body.id, status: 'completed' });
        const secret = fs.readFileSync(path.join(app.dataDir, 'webhook.key'), 'utf8').trim();
        const expected = `sha256=${createHmac('sha256', secret)
          .update(received[0]?.body ?? '')
          .digest('hex')}`;
        expect(received[0]?.signature).toBe(expected);
        const attempts = await app.container.stores.predictions.deliveries(body.id);
        expect(attempts.map((d) => d.outcome)).toEqual(['failed', 'delivered']);
      } finally {
        await new Promise<void>((resolve) => receiver.close(() => resolve()));
      }
    });
  });
});

describe('extraction safety and restarts', () => {
  it('refuses URLs that point inside the network unless configured', async () => {
    const app = await startTestApp();
    try {
      const key = await app.createKey('careful');
      for (const url of ['http://127.0.0.1:9/x.png', 'http://169.254.169.254/latest/meta-data', 'file:///etc/passwd']) {
        const res = await call(`${app.url}/v1/document/generate`, {
          key,
          json: { url, domain: 'document.invoice', batch: false },
        });
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ detail: { error: { code: 'url_not_allowed', param: 'url' } } });
      }
      const hook = await call(`${app.url}/v1/image/generate`, {
        key,
        json: {
          domain: 'document.receipt',
          images: [renderTextImage(['TOTAL 1.00']).toString('base64')],
          callback_url: 'ftp://x',
        },
      });
      expect(await hook.json()).toMatchObject({
        detail: { error: { code: 'url_not_allowed', param: 'callback_url' } },
      });
    } finally {
      await app.close();
    }
  });

  it('resumes a job that was running when the process stopped', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-resume-'));
    const first = await startTestApp({}, dataDir);
    const key = await first.createKey('resumers');
    const pdf = await makeTextPdf([['Invoice Number: R-77', 'Total Due: 10.00']]);
    const { id: fileId } = (await (await uploadFile(first.url, key, pdf, { filename: 'r.pdf' })).json()) as {
      id: string;
    };
    const res = await call(`${first.url}/v1/document/generate`, {
      key,
      json: { file_id: fileId, domain: 'document.invoice', batch: true },
    });
    const { id } = (await res.json()) as { id: string };
    await first.container.jobs.idle();
    // Make it look as if the process died mid-run.
    await rawSql(first.container).run(
      `UPDATE predictions SET status = 'running', completed_at = NULL, response_json = NULL WHERE id = ?`,
      [id],
    );
    await first.stop();

    const second = await startTestApp({}, dataDir);
    try {
      await second.container.jobs.idle();
      const done = (await (await call(`${second.url}/v1/predictions/${id}`, { key })).json()) as Prediction;
      expect(done.status).toBe('completed');
      expect(done.response).toMatchObject({ invoice_id: 'R-77' });
    } finally {
      await second.close();
    }
  });
});
