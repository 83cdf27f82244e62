/**
 * Gateway debits are written behind, in batches (PRISM_WALLET_FLUSH_MS): a server that stops gracefully has
 * written every one of them before its database closes.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { call, ON_SQLITE, startTestApp } from '../helpers/test-app';

it('writes every queued debit to the database when the server stops', async () => {
  // A flush interval far beyond the test: only the shutdown can write the debit.
  const app = await startTestApp({ ...ON_SQLITE, PRISM_WALLET_FLUSH_MS: '10000' });
  const dbPath = app.container.config.data.dbPath;
  const debits = (): Array<{ amount: number; reason: string }> => {
    const db = new Database(dbPath, { readonly: true });
    try {
      return db
        .prepare("SELECT amount_micros AS amount, reason FROM wallet_entries WHERE reason LIKE 'chat.completions %'")
        .all() as Array<{ amount: number; reason: string }>;
    } finally {
      db.close();
    }
  };
  try {
    const res = await call(`${app.url}/v1/compat/chat/completions`, {
      key: app.ownerKey,
      json: { model: 'prism-orion-1', messages: [{ role: 'user', content: 'hello' }] },
    });
    expect(res.status).toBe(201);
    const requestId = res.headers.get('x-request-id');
    expect(debits()).toEqual([]);
    await app.stop();
    expect(debits()).toEqual([{ amount: -1000, reason: `chat.completions prism-orion-1 ${requestId}` }]);
  } finally {
    fs.rmSync(app.dataDir, { recursive: true, force: true });
  }
});
