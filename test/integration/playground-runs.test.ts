/**
 * The playground's runs page in a real browser (Debian's chromium, driven by playwright-core): recent executions
 * are listed, a paused run's steps and question are shown, and Approve resumes it to its answer; Reject with a
 * reason ends the call with that reason as the tool's error. Skips with one line when chromium is not installed.
 */
import fs from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { call } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

const CHROMIUM = '/usr/bin/chromium';
const describeWithChromium = fs.existsSync(CHROMIUM) ? describe : describe.skip;
if (!fs.existsSync(CHROMIUM)) {
  process.stderr.write('playground runs: skipped, no Chromium (apt-get install -y chromium)\n');
}

describeWithChromium('playground runs page in Chromium (skipped without /usr/bin/chromium)', () => {
  let lab: UpstreamApp;
  let browser: Browser;
  let page: Page;
  let key: string;

  beforeAll(async () => {
    lab = await startUpstreamApp([
      { id: 'prism-orion-2', upstreamModel: 'planner-llm', parameters: ['tools', 'tool_choice', 'temperature'] },
    ]);
    key = await lab.app.createKey('runs-page-org');
    await lab.app.container.services.accounts.addCredits('runs-page-org', 5);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-sync'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await lab.close();
  });
  beforeEach(async () => {
    page = await browser.newPage();
    await page.goto(`${lab.app.url}/playground/runs`);
  });
  afterEach(() => page.close());

  /** A run that paused before its call of lookup_hub_domain; the planner answers after the decision. */
  const pausedRun = async (): Promise<string> => {
    lab.upstream.next(
      {
        kind: 'reply',
        toolCalls: [{ id: 'call_hub', name: 'lookup_hub_domain', arguments: '{"domain":"document.invoice"}' }],
      },
      { kind: 'reply', content: '```json\n{"answer": "looked up"}\n```' },
    );
    const res = await call(`${lab.app.url}/v1/agent/execute`, {
      key,
      json: {
        model: 'prism-orion-2',
        config: { prompt: 'Look the invoice domain up', require_approval: ['lookup_hub_domain'] },
      },
    });
    const run = (await res.json()) as { id: string; status: string };
    expect(run.status).toBe('paused');
    return run.id;
  };

  const openRun = async (id: string): Promise<void> => {
    await page.fill('#key', key);
    await page.click('#load');
    await page.click(`#list li[data-id="${id}"]`);
    await page.waitForSelector('#pause', { state: 'visible' });
  };

  it('lists a paused run, shows its question, and Approve resumes it to its answer', async () => {
    const id = await pausedRun();
    await openRun(id);
    expect(await page.textContent('#question')).toContain('lookup_hub_domain');
    expect(await page.textContent('#steps')).toContain('plan  prism-orion-2');
    await page.click('#approve');
    await page.waitForFunction("document.getElementById('status').textContent === 'completed'", null, {
      timeout: 60_000,
    });
    await page.waitForFunction("document.getElementById('answer').textContent.includes('looked up')");
    const steps = await page.textContent('#steps');
    expect(steps).toContain('tool  lookup_hub_domain');
    const record = (await (await call(`${lab.app.url}/v1/agent/executions/${id}`, { key })).json()) as {
      status: string;
      steps: { kind: string; error: string | null }[];
    };
    expect(record.status).toBe('completed');
    expect(record.steps.find((s) => s.kind === 'tool')?.error).toBeNull();
  });

  it('Reject with a reason ends the call with that reason', async () => {
    const id = await pausedRun();
    await openRun(id);
    await page.fill('#reason', 'not this domain today');
    await page.click('#reject');
    await page.waitForFunction("document.getElementById('status').textContent === 'completed'", null, {
      timeout: 60_000,
    });
    const record = (await (await call(`${lab.app.url}/v1/agent/executions/${id}`, { key })).json()) as {
      steps: { kind: string; error: string | null }[];
    };
    expect(record.steps.find((s) => s.kind === 'tool')?.error).toContain('not this domain today');
  });
});
