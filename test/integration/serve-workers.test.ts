/**
 * `prism serve --workers N` as an operator runs it (bin/prism.js): without the shared backends it refuses N > 1 and
 * says which settings are missing; with PostgreSQL and Redis it serves on one port from N processes, replaces a
 * worker that dies, and stops every worker on SIGTERM.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { Pool } from 'pg';
import { deleteKeys, testRedisUrl, uniquePrefix } from '../helpers/redis';
import { call } from '../helpers/test-app';

const ROOT = path.resolve(__dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'prism.js');
const databaseUrl = process.env.PRISM_TEST_DATABASE_URL;

describe('prism serve --workers', () => {
  it('refuses more than one worker without PostgreSQL and Redis, naming both', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-workers-'));
    try {
      const result = spawnSync(process.execPath, [BIN, 'serve', '--workers', '2'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, PRISM_DATA_DIR: dataDir, PORT: '0' },
        encoding: 'utf8',
      });
      expect(result.status).toBe(2);
      expect(result.stderr).toContain('set PRISM_DATABASE_URL (postgres://…) and PRISM_REDIS_URL (redis://…)');
      expect(fs.readdirSync(dataDir)).toEqual([]);
      const bad = spawnSync(process.execPath, [BIN, 'serve', '--workers', 'lots'], { cwd: ROOT, encoding: 'utf8' });
      expect(bad.status).toBe(2);
      expect(bad.stderr).toContain('--workers takes a whole number');
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  const shared = databaseUrl && testRedisUrl;
  if (!shared) {
    process.stderr.write('serve --workers 2: skipped, set PRISM_TEST_DATABASE_URL and PRISM_TEST_REDIS_URL\n');
  }
  (shared ? it : it.skip)(
    'serves from two workers on one port, replaces a dead one and stops them all on SIGTERM',
    async () => {
      const schema = `workers_${process.pid}_${randomBytes(3).toString('hex')}`;
      const prefix = uniquePrefix();
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-workers-'));
      const primary = spawn(process.execPath, [BIN, 'serve', '--workers', '2'], {
        cwd: ROOT,
        env: {
          ...process.env,
          PRISM_DATA_DIR: dataDir,
          PORT: '0',
          PRISM_LOG_LEVEL: 'warn',
          PRISM_DATABASE_URL: databaseUrl,
          PRISM_DATABASE_SCHEMA: schema,
          PRISM_REDIS_URL: testRedisUrl,
          PRISM_REDIS_PREFIX: prefix,
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      const exited = new Promise<number | null>((resolve) => primary.once('exit', resolve));
      const listening: { url: string; pid: number }[] = [];
      const lines = readline.createInterface({ input: primary.stderr });
      let summary = '';
      lines.on('line', (line) => {
        const match = /listening on (http:\/\/[\d.:]+) .*worker (\d+)\)/.exec(line);
        if (match) listening.push({ url: match[1] as string, pid: Number(match[2]) });
        if (/^prism: \d+ workers/.test(line)) summary = line;
      });
      const waitFor = async (test: () => boolean, what: string): Promise<void> => {
        for (let i = 0; i < 1200 && !test(); i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
        if (!test()) throw new Error(`timed out waiting for ${what}`);
      };
      try {
        await waitFor(() => listening.length >= 2 && summary !== '', 'two workers');
        const [first, second] = listening;
        // node:cluster shares one port among the workers (even a PORT=0 one).
        expect(second!.url).toBe(first!.url);
        expect(second!.pid).not.toBe(first!.pid);
        const key = fs.readFileSync(path.join(dataDir, 'owner.key'), 'utf8').trim();
        const statuses = await Promise.all(
          Array.from({ length: 20 }, () => call(`${first!.url}/v1/files`, { key }).then((r) => r.status)),
        );
        expect(statuses.every((s) => s === 200)).toBe(true);

        process.kill(first!.pid, 'SIGKILL');
        await waitFor(() => listening.length >= 3, 'a replacement worker');
        expect((await call(`${first!.url}/v1/files`, { key })).status).toBe(200);

        primary.kill('SIGTERM');
        expect(await exited).toBe(0);
        for (const { pid } of listening.slice(1)) expect(() => process.kill(pid, 0)).toThrow();
      } finally {
        primary.kill('SIGKILL');
        const pool = new Pool({ connectionString: databaseUrl });
        await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await pool.query(`DROP SCHEMA IF EXISTS "${schema}_checkpoints" CASCADE`);
        await pool.end();
        await deleteKeys(testRedisUrl as string, prefix);
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    },
    120_000,
  );
});
