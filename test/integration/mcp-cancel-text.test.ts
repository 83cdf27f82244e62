/**
 * A caller's `notifications/cancelled` stops a waiting `extract_document` on a long text PDF: the MCP SDK
 * client cancels at the first progress notification, and the prediction ends `failed`, saying the client cancelled,
 * long before its 400 pages were read.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { makeTextPdf } from '../helpers/media-fixtures';
import { connectMcp, toolOutput } from '../helpers/mcp-client';
import { call, startTestApp, type TestApp } from '../helpers/test-app';

const PAGES = 400;

describe('cancelling a waiting extraction of a long text PDF', () => {
  let app: TestApp;
  let pdf: Buffer;

  beforeAll(async () => {
    app = await startTestApp();
    pdf = await makeTextPdf(
      Array.from({ length: PAGES }, (_, i) => [`Invoice page ${i + 1}`, 'Vendor: Greenleaf Market', `Total ${i}.00`]),
    );
  });
  afterAll(() => app.close());

  it('stops reading pages and ends failed', async () => {
    const key = await app.createKey('text-canceller', 'pro');
    await app.container.services.accounts.addCredits('text-canceller', 5);
    const client = await connectMcp(app.url, `Bearer ${key}`);
    try {
      const controller = new AbortController();
      let progressed = 0;
      const pending = client.callTool(
        { name: 'extract_document', arguments: { domain: 'document.invoice', data: pdf.toString('base64') } },
        undefined,
        {
          signal: controller.signal,
          onprogress: (p) => {
            progressed = Math.max(progressed, p.progress);
            controller.abort('enough');
          },
          timeout: 120_000,
        },
      );
      await expect(pending).rejects.toThrow();
      // The record may land a moment after the first progress (on PostgreSQL the write is a round trip away).
      let id: string | undefined;
      for (let i = 0; i < 200 && id === undefined; i += 1) {
        const listed = (await (await call(`${app.url}/v1/predictions?limit=1`, { key })).json()) as { id: string }[];
        id = listed[0]?.id;
        if (id === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      let prediction: Record<string, unknown> = {};
      for (let i = 0; i < 300; i += 1) {
        const result = (await client.callTool({ name: 'get_prediction', arguments: { id } })) as CallToolResult;
        prediction = toolOutput(result);
        if (prediction.status !== 'running') break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(prediction).toMatchObject({ status: 'failed', usage: { credits_used: 0 } });
      expect(String((prediction.usage as { message?: string }).message)).toMatch(/client cancelled the call/);
      expect(progressed).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });
});
