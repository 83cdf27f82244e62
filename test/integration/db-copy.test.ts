/**
 * `prism db copy`: a single-user SQLite install (keys, a wallet with its ledger, a file, a finished prediction,
 * feedback) moves onto PostgreSQL with every table's count and checksum verified and its blobs copied; the app
 * started on the copy serves the same key, file bytes, prediction and balance; a second run copies nothing and
 * still verifies; a target row that differs fails the check. Skips with one line unless PRISM_TEST_DATABASE_URL is set.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../src/config/config';
import { dbCopy } from '../../src/cli/db.commands';
import { makeTextPdf } from '../helpers/media-fixtures';
import { describePostgres, dropTestSchema, TEST_DATABASE_URL, testSchemaName } from '../helpers/pg-schema';
import { call, ON_SQLITE, startTestApp, uploadFile } from '../helpers/test-app';

describePostgres('prism db copy', () => {
  const schema = testSchemaName();
  const blobDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-copy-blobs-'));
  let dataDir = '';
  afterAll(async () => {
    await dropTestSchema(schema);
    fs.rmSync(blobDir, { recursive: true, force: true });
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('copies every record and blob, verifies them, serves them from PostgreSQL, and is safe to re-run', async () => {
    // The source: a single-machine install (SQLite, local blobs, whatever PRISM_TEST_BACKEND says).
    const source = await startTestApp(ON_SQLITE);
    dataDir = source.dataDir;
    const { key, orgId: org } = await source.container.services.accounts.createKey({ org: 'movers', tier: 'pro' });
    await source.container.stores.wallets.credit(org, 2_500_000, 'top up');
    const pdf = await makeTextPdf([['Invoice Number: MV-1', 'Total Due: 12.50']]);
    const file = (await (await uploadFile(source.url, key, pdf, { filename: 'mv.pdf' })).json()) as { id: string };
    const generated = await call(`${source.url}/v1/document/generate`, {
      key,
      json: { file_id: file.id, domain: 'document.invoice' },
    });
    const prediction = (await generated.json()) as { id: string };
    await source.container.jobs.idle();
    const done = (await (await call(`${source.url}/v1/predictions/${prediction.id}`, { key })).json()) as {
      status: string;
    };
    expect(done.status).toBe('completed');
    const feedback = await call(`${source.url}/v1/feedback/submit`, {
      key,
      json: { request_id: prediction.id, notes: 'fine' },
    });
    expect(feedback.status).toBeLessThan(300);
    const balance = await source.container.stores.wallets.balance(org);
    await source.stop();

    const config = loadConfig({ PRISM_DATA_DIR: dataDir, PRISM_LOG_LEVEL: 'silent' });
    const args = ['--to', TEST_DATABASE_URL as string, '--schema', schema, '--blobs', blobDir];
    const quiet = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const said = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    // Not a terminal: progress as plain lines (no bar, no carriage returns), the last one at 100%.
    let progress = '';
    const progressOut = { isTTY: false, write: (text: string) => (progress += text) };
    try {
      expect(await dbCopy(config, args, progressOut)).toBe(0);
      expect(said.mock.calls.at(-1)?.[0]).toMatch(/^copied and verified \d+ rows in \d+\.\d s$/);
      const total = Number(/^copied and verified (\d+) rows/.exec(String(said.mock.calls.at(-1)?.[0]))?.[1]);
      const progressLines = progress.trimEnd().split('\n');
      expect(progress.includes('\r') || progress.includes('\u001b')).toBe(false);
      for (const line of progressLines) {
        expect(line).toMatch(/^copy: [\d,]+\/[\d,]+ rows \(\d+\.\d%\), [\d,]+ rows\/s, /);
      }
      expect(progressLines.at(-1)).toMatch(
        new RegExp(
          `^copy: ${total.toLocaleString('en')}/${total.toLocaleString('en')} rows \\(100\\.0%\\), [\\d,]+ rows/s, \\d+\\.\\d s$`,
        ),
      );
      expect(quiet.mock.calls.map((c) => String(c[0])).join('\n')).toMatch(/blobs: \d+, [1-9]\d* copied now/);
      // Re-run: nothing new, everything still verified.
      quiet.mockClear();
      expect(await dbCopy(config, args, progressOut)).toBe(0);
      const lines = quiet.mock.calls.map((c) => String(c[0]));
      expect(lines.filter((l) => / 0 copied now, checksum ok$/.test(l))).toHaveLength(lines.length - 1);
      expect(lines.at(-1)).toMatch(/, 0 copied now, \d+ already there, 0 bad$/);
    } finally {
      quiet.mockRestore();
      said.mockRestore();
    }
    expect(fs.readdirSync(path.join(blobDir, 'sha256')).length).toBeGreaterThan(0);

    // The copy, served: same data folder for the secrets, records from PostgreSQL.
    const moved = await startTestApp(
      { ...ON_SQLITE, PRISM_DATABASE_URL: TEST_DATABASE_URL as string, PRISM_DATABASE_SCHEMA: schema },
      dataDir,
    );
    try {
      expect(moved.container.dialect).toBe('postgres');
      const content = await call(`${moved.url}/v1/files/${file.id}/content`, { key });
      expect(Buffer.from(await content.arrayBuffer()).equals(pdf)).toBe(true);
      const got = (await (await call(`${moved.url}/v1/predictions/${prediction.id}`, { key })).json()) as {
        status: string;
        response: unknown;
      };
      expect(got).toMatchObject({ status: 'completed', response: { invoice_id: 'MV-1' } });
      expect(await moved.container.stores.wallets.balance(org)).toBe(balance);
    } finally {
      await moved.stop();
    }

    // A target row that differs from the source fails the check, naming the table.
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query(`UPDATE "${schema}".files SET filename = 'changed.pdf' WHERE id = $1`, [file.id]);
    await client.end();
    const told = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const out = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      expect(await dbCopy(config, args, progressOut)).toBe(1);
      expect(told.mock.calls.map((c) => String(c[0])).find((l) => l.startsWith('files '))).toMatch(/MISMATCH/);
      expect(out.mock.calls.at(-1)?.[0]).toMatch(/FAILED verification/);
    } finally {
      told.mockRestore();
      out.mockRestore();
    }
  }, 120_000);
});
