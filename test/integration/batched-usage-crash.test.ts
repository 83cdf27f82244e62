/**
 * Batched usage survives a crash (issue #43): on PostgreSQL + Redis the wallet's debits are written in groups (a
 * write waits a few milliseconds for more settles). A real server is SIGKILLed while 20 clients have calls in
 * flight and debits are queued; after a restart on the same database, every call that was answered is in the
 * ledger exactly once (by its request id), no call is in it twice, and the balance is the credit less the ledger's
 * debits.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startChildServer } from '../helpers/child-server';
import { describePostgres, dropTestSchema, TEST_DATABASE_URL, testSchemaName } from '../helpers/pg-schema';
import { deleteKeys, testRedisUrl, uniquePrefix } from '../helpers/redis';
import { startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream';

/** Clients calling one after another until the kill; the kill comes once KILL_AFTER calls are answered. */
const CLIENTS = 20;
const KILL_AFTER = 40;
const MOST_CALLS = 400;

describePostgres('batched usage and a killed server', () => {
  if (!testRedisUrl) {
    it.skip('needs PRISM_TEST_REDIS_URL', () => {});
    return;
  }
  const redisUrl = testRedisUrl;
  const schema = testSchemaName();
  const prefix = uniquePrefix();
  let upstream: ScriptedUpstream;
  let dir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    upstream.forModel('crash-upstream', {
      kind: 'stream',
      chunks: ['billed', ' once'],
      usage: { prompt_tokens: 10, completion_tokens: 2 },
      firstChunkDelayMs: 30,
    });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-usage-crash-'));
    const modelsFile = path.join(dir, 'models.yaml');
    fs.writeFileSync(
      modelsFile,
      `upstreams:\n  - { name: lab, base_url: "${upstream.baseUrl}", provider: lab }\nmodels:\n` +
        '  - id: crash-model\n    engine: { kind: upstream, upstream: lab, model: crash-upstream }\n' +
        '    supported_parameters: [max_tokens]\n    pricing: { prompt: 1, completion: 1 }\n',
    );
    env = {
      PRISM_MODELS_FILE: modelsFile,
      PRISM_DATABASE_URL: TEST_DATABASE_URL as string,
      PRISM_DATABASE_SCHEMA: schema,
      PRISM_REDIS_URL: redisUrl,
      PRISM_REDIS_PREFIX: prefix,
      PRISM_BLOB_URL: '',
      PRISM_OWNER_CREDITS_USD: '100',
    };
  });
  afterAll(async () => {
    await upstream.close();
    fs.rmSync(dir, { recursive: true, force: true });
    await dropTestSchema(schema);
    await deleteKeys(redisUrl, prefix);
  });

  it('bills every answered call exactly once after a SIGKILL with debits pending', async () => {
    const first = await startChildServer(path.join(dir, 'data'), env, 120_000);
    if (process.env.PRISM_TEST_TRACE) process.stderr.write(`crash test: first server up ${Date.now()}\n`);
    const key = fs.readFileSync(path.join(dir, 'data', 'owner.key'), 'utf8').trim();
    const answered: string[] = [];
    const refusals: string[] = [];
    let killed = false;
    const call = async (i: number): Promise<void> => {
      const requestId = `crash-call-${i}`;
      try {
        const res = await fetch(`${first.url}/v1/compat/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': requestId },
          body: JSON.stringify({ model: 'crash-model', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }),
        });
        const body = await res.text();
        if (res.ok) answered.push(requestId);
        else refusals.push(`${res.status} ${body.slice(0, 200)}`);
      } catch {
        // The server died before it answered: this call may or may not be billed, but never twice.
      }
      if (!killed && answered.length >= KILL_AFTER) {
        killed = true;
        first.child.kill('SIGKILL');
      }
    };
    let issued = 0;
    const client = async (): Promise<void> => {
      while (!killed && issued < MOST_CALLS) await call((issued += 1));
    };
    await Promise.all(Array.from({ length: CLIENTS }, client));
    if (!killed) first.child.kill('SIGKILL');
    await first.exited;
    expect(refusals.slice(0, 1)).toEqual([]);
    expect(killed).toBe(true);
    expect(answered.length).toBeGreaterThan(0);

    if (process.env.PRISM_TEST_TRACE) {
      process.stderr.write(`crash test: killed, ${answered.length} answered of ${issued}\n`);
    }
    // Calls were in flight when the server died (some answered, some cut off).
    expect(issued).toBeGreaterThan(answered.length);
    const second = await startChildServer(path.join(dir, 'data'), env, 120_000);
    if (process.env.PRISM_TEST_TRACE) process.stderr.write(`crash test: second server up ${Date.now()}\n`);
    const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await db.connect();
    try {
      await db.query(`SET search_path TO "${schema}"`);
      const { rows: entries } = await db.query<{ org_id: string; amount_micros: string; reason: string }>(
        "SELECT org_id, amount_micros, reason FROM wallet_entries WHERE reason LIKE 'chat.completions %'",
      );
      const billedIds = entries.map((e) => /crash-call-\d+/.exec(e.reason)?.[0] ?? '');
      // Each answered call once; none twice (a call the kill cut off may be billed, once, or not at all).
      for (const id of answered) expect(billedIds.filter((b) => b === id)).toHaveLength(1);
      expect(new Set(billedIds).size).toBe(billedIds.length);
      const orgId = entries[0]?.org_id as string;
      const { rows: all } = await db.query<{ total: string }>(
        'SELECT COALESCE(SUM(amount_micros), 0) AS total FROM wallet_entries WHERE org_id = $1',
        [orgId],
      );
      const { rows: wallet } = await db.query<{ balance_micros: string; held_micros: string }>(
        'SELECT balance_micros, held_micros FROM wallets WHERE org_id = $1',
        [orgId],
      );
      expect(Number(wallet[0]?.balance_micros)).toBe(Number(all[0]?.total));
      expect(Number(wallet[0]?.balance_micros)).toBeGreaterThanOrEqual(0);
    } finally {
      await db.end();
      second.child.kill('SIGTERM');
      await second.exited;
    }
  }, 300_000);
});
