/**
 * Issue 18, defect 5 (the rest of it): extraction and agent executions hold their largest cost on the wallet
 * before any work, like gateway calls. With PRISM_EXTRACTION_USD_PER_PAGE set, concurrent generate requests at a
 * wallet that covers N of them get exactly N predictions and N-many 402 `insufficient_credits` for the rest; the
 * same for concurrent agent executions, each holding the biller's minimum while it runs. The balance never goes
 * below zero.
 */
import { makePdf, makeTextPdf, renderTextImage } from '../helpers/media-fixtures';
import { call, startTestApp, uploadFile, type TestApp } from '../helpers/test-app';

const INVOICE_PAGES = [
  ['ACME SUPPLIES LTD', 'Invoice Number: INV-2024-0042', 'Total Due: 1,250.00'],
  ['Terms: 30 days', 'Thank you for your business'],
];

describe('priced work reserves the wallet', () => {
  let app: TestApp;

  beforeAll(async () => {
    // $0.002 a page: the two-page invoice costs $0.004; an execution on the local planner holds the $0.001 minimum
    // while it runs and costs nothing (no model tokens; the minimum bill is the chat-completion rule).
    app = await startTestApp({ PRISM_EXTRACTION_USD_PER_PAGE: '0.002', PRISM_RATE_LIMIT_PER_MINUTE: '1000' });
  });
  afterAll(() => app.close());

  const balanceOf = async (org: string): Promise<number> => {
    const { orgId } = await app.container.services.accounts.addCredits(org, 0);
    return app.container.stores.wallets.balance(orgId);
  };
  /** A two-page text PDF (no OCR needed) uploaded by `key`'s organisation. */
  const fileFor = async (key: string): Promise<string> => {
    const res = await uploadFile(app.url, key, await makeTextPdf(INVOICE_PAGES), { filename: 'inv.pdf' });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };
  const generate = (key: string, fileId: string, extra: Record<string, unknown> = {}) =>
    call(`${app.url}/v1/document/generate`, {
      key,
      json: { file_id: fileId, model: 'prism-1', domain: 'document.invoice', batch: false, ...extra },
    });

  it('lets exactly the covered extractions of 15 concurrent ones through, at $0.002 a page', async () => {
    const key = await app.createKey('extract-tight');
    await app.container.services.accounts.addCredits('extract-tight', 0.02); // five two-page invoices
    const fileId = await fileFor(key);
    const results = await Promise.all(Array.from({ length: 15 }, () => generate(key, fileId)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 402)).toHaveLength(10);
    expect(statuses.filter((s) => s !== 402)).toEqual(Array.from({ length: 5 }, () => 201));
    for (const r of results) {
      const body = (await r.json()) as Record<string, unknown>;
      if (r.status === 402) expect(JSON.stringify(body)).toContain('insufficient_credits');
      else expect(body).toMatchObject({ status: 'completed', usage: { credits_used: 2 } });
    }
    expect(await balanceOf('extract-tight')).toBe(0);
    // Refused requests left no prediction behind.
    const listed = await call(`${app.url}/v1/predictions?limit=100`, { key });
    expect(((await listed.json()) as unknown[]).length).toBe(5);
  });

  it('holds only the pages asked for, and neither a failed nor an empty extraction is billed', async () => {
    const key = await app.createKey('extract-pages');
    await app.container.services.accounts.addCredits('extract-pages', 0.002); // one page
    const fileId = await fileFor(key);
    expect((await generate(key, fileId)).status).toBe(402);
    // Every page fails after the hold (a scan too large to render): 502, and the hold is given back.
    const huge = { png: renderTextImage(['TOO BIG'], { width: 2000, height: 2000 }), dpi: 10 };
    const broken = await uploadFile(app.url, key, await makePdf([huge]), { filename: 'broken.pdf' });
    const failed = await generate(key, ((await broken.json()) as { id: string }).id);
    expect(failed.status).toBe(502);
    // A page index the document does not have reads nothing: completed, nothing billed.
    const nothing = await generate(key, fileId, { config: { page_indices: [7] } });
    expect(nothing.status).toBe(201);
    expect(await nothing.json()).toMatchObject({ usage: { credits_used: 0 } });
    const onePage = await generate(key, fileId, { config: { page_indices: [0] } });
    expect(onePage.status).toBe(201);
    expect(await onePage.json()).toMatchObject({ usage: { credits_used: 1 } });
    expect(await balanceOf('extract-pages')).toBe(0);
  });

  it('a batch extraction holds at submission and settles when the job ran', async () => {
    const key = await app.createKey('extract-batch');
    await app.container.services.accounts.addCredits('extract-batch', 0.004);
    const fileId = await fileFor(key);
    const first = await generate(key, fileId, { batch: true });
    expect(first.status).toBe(201);
    // The first one's hold covers the whole wallet while it waits or runs.
    const second = await generate(key, fileId, { batch: true });
    const { id } = (await first.json()) as { id: string };
    let done: { status: string } = { status: 'pending' };
    while (!['completed', 'failed'].includes(done.status)) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      done = (await (await call(`${app.url}/v1/predictions/${id}`, { key })).json()) as { status: string };
    }
    expect(done.status).toBe('completed');
    if (second.status === 201) throw new Error('the second batch request fitted into a wallet already held');
    expect(second.status).toBe(402);
    expect(await balanceOf('extract-batch')).toBe(0);
  });

  it('free extraction (no price) does not look at the wallet', async () => {
    const free = await startTestApp();
    try {
      const key = (await free.container.services.accounts.createKey({ org: 'broke' })).key;
      const res = await uploadFile(free.url, key, await makeTextPdf(INVOICE_PAGES), { filename: 'inv.pdf' });
      const fileId = ((await res.json()) as { id: string }).id;
      const generated = await call(`${free.url}/v1/document/generate`, {
        key,
        json: { file_id: fileId, model: 'prism-1', domain: 'document.invoice' },
      });
      expect(generated.status).toBe(201);
    } finally {
      await free.close();
    }
  });

  it('lets exactly the covered executions of 12 concurrent ones through, and gives failed runs their hold back', async () => {
    const key = await app.createKey('agents-tight');
    await app.container.services.accounts.addCredits('agents-tight', 0.004); // four holds of the $0.001 minimum
    const fileId = await fileFor(key);
    const execute = () =>
      call(`${app.url}/v1/agent/execute`, {
        key,
        json: {
          inputs: { invoice: { type: 'input_file', file_id: fileId } },
          config: {
            prompt: 'Extract the invoice fields',
            json_schema: { type: 'object', properties: { invoice_id: { type: ['string', 'null'] } } },
          },
        },
      });
    const results = await Promise.all(Array.from({ length: 12 }, execute));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 402)).toHaveLength(8);
    expect(statuses.filter((s) => s === 200)).toHaveLength(4);
    for (const r of results) {
      const body = (await r.json()) as Record<string, unknown>;
      if (r.status === 402) expect(JSON.stringify(body)).toContain('insufficient_credits');
      else {
        expect(body).toMatchObject({
          status: 'completed',
          usage: { standard_cost_dollars: 0, cost_dollars: 0, savings_dollars: 0 },
        });
      }
    }
    // No model ran: every hold was given back and nothing debited.
    expect(await balanceOf('agents-tight')).toBe(4000);
    // With the wallet empty nothing runs.
    await app.container.services.accounts.addCredits('agents-tight', -0.004);
    expect((await execute()).status).toBe(402);
  });
});
