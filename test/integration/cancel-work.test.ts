/**
 * Embedded-engine work stops when nobody wants its result: a gateway chat call on a local model whose client
 * aborts or whose deadline answers first (504), and a waiting MCP extraction the client cancels, stop starting pages
 * in the shared OCR pool (one worker
 * here, so pages queue). Observed without timing: the pool's counters (`Container.ocrStats()`: reads run, reads
 * dropped, reads pending), read once the cancelled document has ended (its `pdf read cancelled` log line, written
 * after the pages already on a worker settled; the pool's `pending` alone can touch 0 between two pages), against
 * the number of pages in the document.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import OpenAI, { APIError, APIUserAbortError } from 'openai';
import { createLogger, type Logger } from '../../src/lib/logger';
import { makeScannedPdf, renderReceiptImage } from '../helpers/media-fixtures';
import { connectMcp, toolOutput } from '../helpers/mcp-client';
import { call, startTestApp, type TestApp } from '../helpers/test-app';

// OCR runs on the embedded engine with one worker; on a shared, loaded machine a page can take seconds.
jest.setTimeout(180_000);

const PAGES = 8;

/** Polls `check` every 20 ms until it holds; fails (rather than asserting on time) after a generous bound. */
/** A logger that keeps the messages of what the app logs at info and above. */
function collectingLogger(): { logger: Logger; messages: string[] } {
  const messages: string[] = [];
  const logger = createLogger('info', (line) => void messages.push((JSON.parse(line) as { message: string }).message));
  return { logger, messages };
}

/** How many documents ended cancelled so far. */
const cancelledDocuments = (messages: string[]): number => messages.filter((m) => m === 'pdf read cancelled').length;

async function until(what: string, check: () => boolean | Promise<boolean>, bound = 6000): Promise<void> {
  for (let i = 0; i < bound; i += 1) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`never happened: ${what}`);
}

describe('cancelled work stops reading pages', () => {
  let app: TestApp;
  let pdf: Buffer;
  const logs = collectingLogger();

  beforeAll(async () => {
    app = await startTestApp(
      { PRISM_OCR_WORKERS: '1', PRISM_EXTRACTION_USD_PER_PAGE: '0.002', PRISM_RATE_LIMIT_PER_MINUTE: '1000' },
      undefined,
      { logger: logs.logger },
    );
    pdf = await makeScannedPdf(Array.from({ length: PAGES }, () => renderReceiptImage()));
  });
  afterAll(() => app.close());

  const stats = () => app.container.ocrStats();

  it('a chat call on prism-1 whose client aborts mid-document leaves the remaining pages unread', async () => {
    const key = await app.createKey('chat-leaver', 'pro');
    await app.container.services.accounts.addCredits('chat-leaver', 5);
    const client = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1/compat`, maxRetries: 0 });
    const before = stats();
    const ended = cancelledDocuments(logs.messages);
    const controller = new AbortController();
    const url = `data:application/pdf;base64,${pdf.toString('base64')}`;
    const reply = client.chat.completions
      .create(
        {
          model: 'prism-1',
          messages: [{ role: 'user', content: [{ type: 'document_url', document_url: { url } }] }],
          method: 'ocr',
        } as never,
        { signal: controller.signal },
      )
      .then(
        () => 'answered',
        (error: unknown) => error,
      );
    // The first page is on the worker: the client leaves.
    await until('a page of the document is read', () => stats().reads > before.reads);
    controller.abort();
    expect(await reply).toBeInstanceOf(APIUserAbortError);

    await until('the document ends cancelled', () => cancelledDocuments(logs.messages) > ended);
    const after = stats();
    expect(after.pending).toBe(0);
    // The page waiting for the worker when the client left was dropped, and most pages were never read.
    expect(after.cancelled - before.cancelled).toBeGreaterThanOrEqual(1);
    expect(after.reads - before.reads).toBeLessThan(PAGES);

    // The pool still serves the next caller.
    const image = `data:image/png;base64,${renderReceiptImage().toString('base64')}`;
    const next = await client.chat.completions.create({
      model: 'prism-1',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: image } }] }],
      method: 'ocr',
    } as never);
    expect((next as OpenAI.ChatCompletion).choices[0]?.message.content).toMatch(/TOTAL\s+26\.22/);
  });

  it('a waiting extract_document the client cancels stops reading, ends failed saying so, and bills nothing', async () => {
    const key = await app.createKey('mcp-canceller', 'pro');
    const { orgId } = await app.container.services.accounts.addCredits('mcp-canceller', 5);
    const balance = () => app.container.stores.wallets.balance(orgId);
    const credits = await balance();
    const client = await connectMcp(app.url, `Bearer ${key}`);
    try {
      const before = stats();
      const controller = new AbortController();
      const pending = client.callTool(
        { name: 'extract_document', arguments: { domain: 'document.invoice', data: pdf.toString('base64') } },
        undefined,
        // The first page's progress arrives: the client cancels the call.
        { signal: controller.signal, onprogress: () => controller.abort('enough') },
      );
      await expect(pending).rejects.toThrow();

      // The prediction the call created, read back through REST (newest first), then through get_prediction.
      const listed = (await (await call(`${app.url}/v1/predictions?limit=1`, { key })).json()) as { id: string }[];
      const id = listed[0]?.id;
      expect(id).toEqual(expect.any(String));
      let prediction: Record<string, unknown> = {};
      await until('the prediction ends', async () => {
        const result = (await client.callTool({ name: 'get_prediction', arguments: { id } })) as CallToolResult;
        prediction = toolOutput(result);
        return prediction.status !== 'running';
      });
      expect(prediction).toMatchObject({
        id,
        status: 'failed',
        response: null,
        usage: { credits_used: 0, message: expect.stringMatching(/client cancelled the call/) as unknown },
      });
      const rest = (await (await call(`${app.url}/v1/predictions/${String(id)}`, { key })).json()) as Record<
        string,
        unknown
      >;
      expect(rest).toMatchObject({ status: 'failed', usage: { credits_used: 0 } });
      expect(await balance()).toBe(credits);

      const after = stats();
      expect(after.pending).toBe(0);
      expect(after.cancelled - before.cancelled).toBeGreaterThanOrEqual(1);
      expect(after.reads - before.reads).toBeLessThan(PAGES);
    } finally {
      await client.close();
    }
  });
});

describe('a local chat call past its deadline', () => {
  let app: TestApp;
  let dir: string;
  const logs = collectingLogger();

  beforeAll(async () => {
    // prism-1 with a deadline far shorter than reading the whole document takes on one worker.
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-deadline-'));
    const models = path.join(dir, 'models.yaml');
    fs.writeFileSync(models, 'models:\n  - id: "prism-1"\n    ttft_timeout_s: 1\n    total_timeout_s: 2.5\n');
    app = await startTestApp({ PRISM_OCR_WORKERS: '1', PRISM_MODELS_FILE: models }, undefined, {
      logger: logs.logger,
    });
  });
  afterAll(async () => {
    await app.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers the 504 as before and leaves the remaining pages unread', async () => {
    const key = await app.createKey('slow-reader', 'pro');
    await app.container.services.accounts.addCredits('slow-reader', 5);
    const client = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1/compat`, maxRetries: 0 });
    const pdf = await makeScannedPdf(Array.from({ length: PAGES }, () => renderReceiptImage()));
    const url = `data:application/pdf;base64,${pdf.toString('base64')}`;
    const before = app.container.ocrStats();
    const error = await client.chat.completions
      .create({
        model: 'prism-1',
        messages: [{ role: 'user', content: [{ type: 'document_url', document_url: { url } }] }],
        method: 'ocr',
      } as never)
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(504);
    expect((error as APIError).message).toMatch(/did not finish within 2\.5 s \(total_timeout_s\)/);

    await until('the document ends cancelled', () => cancelledDocuments(logs.messages) > 0);
    const after = app.container.ocrStats();
    expect(after.pending).toBe(0);
    expect(after.cancelled - before.cancelled).toBeGreaterThanOrEqual(1);
    expect(after.reads - before.reads).toBeLessThan(PAGES);
  });
});
