/**
 * The `prism` CLI as an operator runs it: keys create/revoke and credits add on a data folder that a running
 * server uses at the same time.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { call, databaseEnvFor, startTestApp, type TestApp } from '../helpers/test-app';

const BIN = path.resolve(__dirname, '..', '..', 'bin', 'prism.js');

function prism(dataDir: string, ...args: string[]) {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...databaseEnvFor(dataDir), PRISM_DATA_DIR: dataDir, PRISM_LOG_LEVEL: 'silent' },
    encoding: 'utf8',
  });
  const lines = result.stdout.trim().split('\n');
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, last: lines[lines.length - 1] ?? '' };
}

describe('prism CLI', () => {
  let dataDir: string;
  let app: TestApp;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-cli-'));
    app = await startTestApp({}, dataDir);
  });
  afterAll(() => app.close());

  it('creates a key (printed on the last line) that the running server accepts, and revokes it', async () => {
    const created = prism(dataDir, 'keys', 'create', '--org', 'acme', '--tier', 'pro', '--name', 'ci');
    expect(created.status).toBe(0);
    expect(created.last).toMatch(/^prism_[\w-]{32}$/);
    const keyId = /key ([0-9a-f-]{36})/.exec(created.stderr)?.[1];
    expect(keyId).toBeDefined();

    const ok = await call(`${app.url}/v1/files`, { key: created.last });
    expect(ok.status).toBe(200);

    const revoked = prism(dataDir, 'keys', 'revoke', keyId ?? '');
    expect(revoked.status).toBe(0);
    expect((await call(`${app.url}/v1/files`, { key: created.last })).status).toBe(401);
  });

  it('adds credits to an organisation wallet', async () => {
    prism(dataDir, 'keys', 'create', '--org', 'wallet-co');
    const first = prism(dataDir, 'credits', 'add', '--org', 'wallet-co', '--usd', '2.5');
    expect(first.status).toBe(0);
    expect(first.last).toMatch(/^balance 2\.500000 USD/);
    const second = prism(dataDir, 'credits', 'add', '--org', 'wallet-co', '--usd', '0.25');
    expect(second.last).toMatch(/^balance 2\.750000 USD/);
    const org = await app.container.stores.accounts.findOrg('wallet-co');
    expect(await app.container.stores.wallets.balance(org?.id ?? '')).toBe(2_750_000);
  });

  it('explains bad usage with exit code 2 and unknown things with exit code 1', () => {
    expect(prism(dataDir, 'keys', 'create').status).toBe(2);
    expect(prism(dataDir, 'keys', 'create', '--org', 'x', '--tier', 'gold').status).toBe(2);
    expect(prism(dataDir, 'credits', 'add', '--org', 'acme', '--usd', '-1').status).toBe(2);
    expect(prism(dataDir, 'frobnicate').status).toBe(2);
    const missing = prism(dataDir, 'credits', 'add', '--org', 'nobody', '--usd', '1');
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain("organisation 'nobody' not found");
  });

  it('creates the owner on an empty data folder with a 0600 key file', () => {
    const fresh = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-cli-fresh-'));
    try {
      const result = prism(fresh, 'keys', 'create', '--org', 'first');
      expect(result.status).toBe(0);
      const stat = fs.statSync(path.join(fresh, 'owner.key'));
      expect(stat.mode & 0o777).toBe(0o600);
      expect(fs.readFileSync(path.join(fresh, 'owner.key'), 'utf8').trim()).not.toBe(result.last);
    } finally {
      fs.rmSync(fresh, { recursive: true, force: true });
    }
  });
});
