/**
 * Cancelling `execute_agent` over `/mcp` stops the step that is running, as cancelling `extract_document` does:
 * the deterministic planner sends a scanned PDF to read_document, the client cancels once the shared OCR pool (one
 * worker, so pages queue) has started reading it, and the remaining pages are never read. Observed without timing,
 * as in cancel-work.test.ts: the pool's counters once the document has ended (its `pdf read cancelled` log line),
 * against the number of pages; and the execution ends failed, saying it was cancelled.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createLogger } from '../../../src/lib/logger';
import { makeScannedPdf, renderReceiptImage } from '../../helpers/media-fixtures';
import { connectMcp, toolOutput } from '../../helpers/mcp-client';
import { startTestApp, type TestApp } from '../../helpers/test-app';

jest.setTimeout(180_000);

const PAGES = 8;

async function until(what: string, check: () => boolean | Promise<boolean>, bound = 6000): Promise<void> {
  for (let i = 0; i < bound; i += 1) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`never happened: ${what}`);
}

describe('cancelling execute_agent over MCP', () => {
  let app: TestApp;
  const messages: string[] = [];

  beforeAll(async () => {
    const logger = createLogger(
      'info',
      (line) => void messages.push((JSON.parse(line) as { message: string }).message),
    );
    app = await startTestApp({ PRISM_OCR_WORKERS: '1', PRISM_RATE_LIMIT_PER_MINUTE: '1000' }, undefined, { logger });
  });
  afterAll(() => app.close());

  it('stops the running read_document at its next page and ends the run failed', async () => {
    const key = await app.createKey('agent-canceller', 'pro');
    await app.container.services.accounts.addCredits('agent-canceller', 5);
    const pdf = await makeScannedPdf(Array.from({ length: PAGES }, () => renderReceiptImage()));
    const client = await connectMcp(app.url, `Bearer ${key}`, { toolsets: 'agents' });
    try {
      const before = app.container.ocrStats();
      const cancelledBefore = messages.filter((m) => m === 'pdf read cancelled').length;
      const controller = new AbortController();
      const pending = client.callTool(
        {
          name: 'execute_agent',
          arguments: { inputs: { document: `data:application/pdf;base64,${pdf.toString('base64')}` } },
        },
        undefined,
        { signal: controller.signal },
      );
      pending.catch(() => undefined);
      // read_document is reading: the pool has run or holds a page of this document.
      await until('the first page is read', () => app.container.ocrStats().reads > before.reads);
      controller.abort('enough');
      await expect(pending).rejects.toThrow();

      await until(
        'the document ends cancelled',
        () => messages.filter((m) => m === 'pdf read cancelled').length > cancelledBefore,
      );
      const after = app.container.ocrStats();
      expect(after.reads - before.reads).toBeLessThan(PAGES);
      expect(after.pending).toBe(0);

      let newest: Record<string, unknown> = {};
      await until('the execution ends', async () => {
        const listed = toolOutput(
          (await client.callTool({ name: 'list_executions', arguments: { limit: 1 } })) as CallToolResult,
        );
        newest = (listed.items as Record<string, unknown>[])[0] ?? {};
        return newest.status === 'failed' || newest.status === 'completed';
      });
      expect(newest).toMatchObject({ status: 'failed', response: null });
      expect((newest.usage as { message: string }).message).toMatch(/cancelled/);
    } finally {
      await client.close();
    }
  });
});
