/**
 * The `prism` CLI as an operator runs it: keys create/revoke and credits add on a data folder that a running
 * server uses at the same time.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startScriptedUpstream } from '../helpers/scripted-upstream';
import { call, databaseEnvFor, startTestApp, type TestApp } from '../helpers/test-app';
import { writeLabModelsFile } from '../helpers/upstream-app';

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
  }, 120_000); // three CLI processes, each opening the data folder (~10 s each on a loaded machine)

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

  it("prints every command's help without starting anything", () => {
    for (const args of [['serve'], ['mcp'], ['extract'], ['keys'], ['keys', 'list'], ['credits'], ['skills', 'push']]) {
      const started = Date.now();
      const help = prism(dataDir, ...args, '--help');
      expect(help.status).toBe(0);
      expect(help.stdout).toContain(`Usage: prism ${args.join(' ')}`);
      // `serve --help` used to start a server and `mcp --help` the stdio server: neither returns on its own.
      expect(Date.now() - started).toBeLessThan(20_000);
    }
    expect(prism(dataDir, 'keys', '--help').stdout).toMatch(/keys create[\s\S]*keys list[\s\S]*keys revoke/);
    expect(prism(dataDir, 'help').stdout).toContain('prism credits show --org ORG');
  });

  it('prints only the key on stdout at create (its id on stderr), lists the keys without secrets, and shows a balance', () => {
    const created = prism(dataDir, 'keys', 'create', '--org', 'listed', '--tier', 'pro', '--name', 'robot');
    // `prism keys create … > acme.key` writes one line: the key.
    const [key, ...more] = created.stdout.trim().split('\n');
    expect(more).toEqual([]);
    expect(created.stdout).toBe(`${key}\n`);
    const keyId = /^key_id ([0-9a-f-]{36})$/m.exec(created.stderr)?.[1];
    expect(keyId).toBeDefined();
    expect(key).toBe(created.last);
    expect(prism(dataDir, 'keys', 'revoke', keyId ?? '').status).toBe(0);
    prism(dataDir, 'keys', 'create', '--org', 'listed', '--name', 'second');

    const listed = prism(dataDir, 'keys', 'list', '--org', 'listed');
    expect(listed.status).toBe(0);
    const rows = listed.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^KEY_ID\s+PREFIX\s+NAME\s+CREATED\s+STATUS$/);
    expect(rows).toHaveLength(3);
    expect(rows[1]).toMatch(new RegExp(`^${keyId}\\s+prism_\\S+…\\s+robot\\s+\\S+\\s+revoked `));
    expect(rows[2]).toMatch(/\ssecond\s.*active$/);
    expect(listed.stdout).not.toContain(key);

    prism(dataDir, 'credits', 'add', '--org', 'listed', '--usd', '3');
    expect(prism(dataDir, 'credits', 'show', '--org', 'listed').last).toMatch(/^balance 3\.000000 USD/);
  });

  it('prints no start-up log (the bundled-ffmpeg warning, skills seeding) unless PRISM_LOG_LEVEL asks', () => {
    const env: Record<string, string | undefined> = {
      ...process.env,
      ...databaseEnvFor(dataDir),
      PRISM_DATA_DIR: dataDir,
    };
    delete env['PRISM_LOG_LEVEL'];
    const quiet = spawnSync(process.execPath, [BIN, 'keys', 'list', '--org', 'acme'], { env, encoding: 'utf8' });
    expect(quiet.status).toBe(0);
    expect(quiet.stderr).not.toMatch(/"level"/);
    expect(quiet.stdout).not.toMatch(/"level"/);
    const asked = spawnSync(process.execPath, [BIN, 'keys', 'list', '--org', 'acme'], {
      env: { ...env, PRISM_LOG_LEVEL: 'debug' },
      encoding: 'utf8',
    });
    expect(asked.stderr + asked.stdout).toMatch(/"level":"(debug|info|warn)"/);
  });

  it('refuses key commands on a data folder that does not exist instead of creating one', () => {
    const nowhere = path.join(os.tmpdir(), `prism-cli-nowhere-${process.pid}`);
    const result = prism(nowhere, 'keys', 'list', '--org', 'acme');
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(`no Prism data folder at ${nowhere}`);
    expect(fs.existsSync(nowhere)).toBe(false);
  });

  it('runs linked from any folder, resolving relative paths there, with a progress line on slow extractions', () => {
    // `npm link` puts a symlink to bin/prism.js on the PATH; run it that way from a folder outside the checkout.
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-cli-elsewhere-'));
    try {
      fs.symlinkSync(BIN, path.join(elsewhere, 'prism'));
      fs.copyFileSync(
        path.resolve(__dirname, '..', '..', 'docs', 'examples', 'receipt.png'),
        path.join(elsewhere, 'r.png'),
      );
      const result = spawnSync(path.join(elsewhere, 'prism'), ['extract', 'r.png', '--domain', 'document.receipt'], {
        cwd: elsewhere,
        // Progress every 10 ms: any real extraction (it reads with OCR) outlasts that, so the line is always there.
        env: { ...process.env, PRISM_DATA_DIR: 'data', PRISM_LOG_LEVEL: 'silent', PRISM_CLI_PROGRESS_MS: '10' },
        encoding: 'utf8',
      });
      expect(result.status).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ status: 'completed', response: { total: 26.22 } });
      expect(fs.existsSync(path.join(elsewhere, 'data', 'prism.db'))).toBe(true);
      // The extraction outlasts the 10 ms progress interval, so it reports how long it has run.
      expect(result.stderr).toMatch(/prism: extracting r\.png: \d+ s/);
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('models check: validates a models file and calls each upstream model once', async () => {
    const upstream = await startScriptedUpstream();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-cli-models-'));
    try {
      upstream.forModel('good-llm', { kind: 'reply', content: 'OK' });
      upstream.forModel('gone-llm', { kind: 'error', status: 404, body: { error: { message: 'model not found' } } });
      writeLabModelsFile(dir, upstream.baseUrl, [
        { id: 'good', upstreamModel: 'good-llm' },
        { id: 'gone', upstreamModel: 'gone-llm' },
        { id: 'whisper', upstreamModel: 'whisper-small', capabilities: null, more: { mode: 'transcription' } },
      ]);
      // Not spawnSync: the scripted upstream answers from this process.
      const checked = await new Promise<{ status: number | null; stdout: string }>((resolve) => {
        const child = spawn(process.execPath, [BIN, 'models', 'check', 'models.yaml'], {
          cwd: dir,
          env: { ...process.env, PRISM_DATA_DIR: dataDir, PRISM_LOG_LEVEL: 'silent' },
        });
        let stdout = '';
        child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
        child.on('close', (status) => resolve({ status, stdout }));
      });
      expect(checked.status).toBe(1);
      const lines = checked.stdout.trim().split('\n');
      expect(lines[0]).toMatch(/^ok {4}good {2}\S+ good-llm {2}\d+ ms {2}takes: text$/);
      expect(lines[1]).toMatch(/^FAIL {2}gone .*gone-llm at http:\/\/127\.0\.0\.1:\d+\/v1: /);
      // A transcription model is probed on /audio/transcriptions with a second of audio.
      expect(lines[2]).toMatch(/^ok {4}whisper {2}\S+ whisper-small {2}\d+ ms {2}takes: audio$/);
      expect(upstream.requests.map((r) => r.body.model)).toEqual(['good-llm', 'gone-llm', 'whisper-small']);
      expect(upstream.requests[2]?.path).toBe('/v1/audio/transcriptions');
      expect((upstream.requests[2]?.body.file as { filename?: string } | undefined)?.filename).toBe('probe.wav');

      fs.writeFileSync(
        path.join(dir, 'bad.yaml'),
        'models:\n  - id: x\n    engine: { kind: upstream, upstream: nowhere, model: m }\n',
      );
      const bad = prism(dataDir, 'models', 'check', path.join(dir, 'bad.yaml'));
      expect(bad.status).toBe(2);
      expect(bad.stderr).toContain('Invalid models file');
      expect(bad.stderr).toContain('nowhere');
    } finally {
      await upstream.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
