/**
 * The playground in a real browser (Debian's chromium, driven by playwright-core): a receipt dropped in as a file
 * shows its total in the JSON and its fields outlined on the image, with a key and as a guest; a chat reply
 * streams in piece by piece; skills are listed. Skips with one line when chromium is not installed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

const CHROMIUM = '/usr/bin/chromium';
const RECEIPT = path.resolve(__dirname, '..', '..', 'docs', 'examples', 'receipt.png');
const describeWithChromium = fs.existsSync(CHROMIUM) ? describe : describe.skip;
if (!fs.existsSync(CHROMIUM)) process.stderr.write('playground: skipped, no Chromium (apt-get install -y chromium)\n');

describeWithChromium('playground in Chromium (skipped without /usr/bin/chromium: apt-get install chromium)', () => {
  let lab: UpstreamApp;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    lab = await startUpstreamApp([{ id: 'my-llm', upstreamModel: 'my-llm', parameters: ['stream', 'stream_options'] }]);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await lab.close();
  });
  beforeEach(async () => {
    page = await browser.newPage();
    await page.goto(`${lab.app.url}/playground`);
    await page.waitForFunction("document.querySelectorAll('#model option').length > 0");
  });
  afterEach(() => page.close());

  const extractReceipt = async (): Promise<Record<string, unknown>> => {
    await page.setInputFiles('#file', RECEIPT);
    await page.selectOption('#target', 'domain:document.receipt');
    await page.click('#run');
    await page.waitForFunction("/done|\\d{3} /.test(document.getElementById('status').textContent)", null, {
      timeout: 120_000,
    });
    expect(await page.textContent('#status')).toBe('done');
    return JSON.parse((await page.textContent('#json')) ?? '{}') as Record<string, unknown>;
  };

  it('extracts a receipt with a key: the total in the JSON, the fields outlined', async () => {
    await page.fill('#key', lab.app.ownerKey);
    const result = await extractReceipt();
    expect(result.total).toBe(26.22);
    expect(await page.locator('.box').count()).toBeGreaterThan(0);
    expect(await page.locator('.box[title="total"]').count()).toBe(1);
  }, 150_000);

  it('extracts as a guest through the gateway', async () => {
    const result = await extractReceipt();
    expect(result.total).toBe(26.22);
  }, 150_000);

  it('streams a chat reply into the page piece by piece', async () => {
    lab.upstream.forModel('my-llm', {
      kind: 'stream',
      chunks: ['Hello', ' from', ' the', ' stream.'],
      chunkDelayMs: 400,
    });
    await page.fill('#key', lab.app.ownerKey);
    await page.selectOption('#model', 'my-llm');
    await page.click('#send');
    // Part of the reply is on the page before the rest has been sent.
    await page.waitForFunction("document.getElementById('reply').textContent === 'Hello from'");
    await page.waitForFunction("document.getElementById('reply').textContent === 'Hello from the stream.'");
  }, 60_000);

  it('lists the skills', async () => {
    await page.click('#browse');
    await page.waitForFunction("document.querySelectorAll('#skills li').length > 0");
    expect(await page.locator('#skills li', { hasText: 'skill receipt' }).count()).toBe(1);
  });
});
