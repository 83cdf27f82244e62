/**
 * Skills benchmarks (issue targets: create from a 1 MiB zip <= 50 ms p50; lookup of the latest version by name
 * <= 1 ms p50 with 10,000 skills stored).
 *
 * Create: `POST /v1/skills/create {file_id}` of an uploaded 1 MiB zip (read the file, check every entry, parse,
 * hash, fsync'd blob write, insert), against writing the same bytes with fsync. Each call gets different bytes, so
 * none is answered by de-duplication. Lookup: 10,000 versions (1,000 names x 10) in one organisation plus the
 * built-ins; the service call in process against a prepared `SELECT 1`, and `POST /v1/skills/lookup` over HTTP
 * against a plain node:http JSON answer.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { rawDatabaseOf } from '../src/backend/raw-database';
import { loadConfig } from '../src/config/config';
import type { Container } from '../src/container';
import type { Principal } from '../src/domain/account';
import { startServer } from '../src/http-server';
import { zipFiles } from '../src/services/skills/skill-pack';
import type { BenchCase } from './harness';

/** The app's SQLite handle (this bench measures the SQLite install). */
function sqliteOf(container: Container) {
  const raw = rawDatabaseOf(container.stores);
  if (raw.dialect !== 'sqlite') throw new Error('the skills bench runs on SQLite');
  return raw.db;
}

const ITERATIONS = 40;

export async function skillsBenchmarks(): Promise<{ cases: BenchCase[]; close: () => Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-bench-skills-'));
  const rawDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-bench-skills-raw-'));
  const config = loadConfig({ PRISM_DATA_DIR: dataDir, PORT: '0', PRISM_LOG_LEVEL: 'silent' });
  const running = await startServer(config, { announce: () => undefined });
  const { container } = running;
  const key = fs.readFileSync(config.data.ownerKeyPath, 'utf8').trim();
  const owner = (await container.services.accounts.ownerPrincipal()) as Principal;
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

  const oneMiBZip = (i: number): Promise<Buffer> =>
    zipFiles([
      { path: 'SKILL.md', data: Buffer.from(`---\nname: bench-create\ndescription: Bench ${i}.\n---\n\nSteps.\n`) },
      { path: 'schema.json', data: Buffer.from('{"type":"object","properties":{"total":{"type":"number"}}}') },
      { path: 'resources/data.bin', data: crypto.randomBytes(1024 * 1024 - 600) },
    ]);
  const total = ITERATIONS + 10;
  const fileIds: string[] = [];
  for (let i = 0; i < total; i += 1) {
    const form = new FormData();
    form.append('file', new Blob([await oneMiBZip(i)]), 'skill.zip');
    const res = await fetch(`${running.url}/v1/files?purpose=assistants`, {
      method: 'POST',
      headers: { authorization: auth.authorization },
      body: form,
    });
    fileIds.push(((await res.json()) as { id: string }).id);
  }
  const zipSize = (await oneMiBZip(0)).length;

  // 10,000 versions: 1,000 names with 10 versions each.
  const store = container.stores.skills;
  const orgId = owner.kind === 'user' ? owner.orgId : '';
  const base = Date.now() - 10_000_000;
  for (let n = 0; n < 1000; n += 1) {
    for (let v = 0; v < 10; v += 1) {
      const sha = crypto.createHash('sha256').update(`${n}:${v}`).digest('hex');
      const at = new Date(base + (n * 10 + v) * 1000);
      await store.insert(
        {
          id: crypto.randomUUID(),
          name: `skill-${n}`,
          skillVersion: `20260101-${sha.slice(0, 8)}`,
          description: 'bench',
          orgId,
          isPublic: false,
          status: 'completed',
          contentHash: sha,
          sizeBytes: 100,
          createdAt: at,
          updatedAt: at,
        },
        'zip',
        { bytes: 100, md5: '0'.repeat(32), sha256: sha },
      );
    }
  }
  const db = sqliteOf(container);
  const skillCount = (db.prepare('SELECT COUNT(*) AS n FROM skills').get() as { n: number }).n;
  const selectOne = db.prepare('SELECT 1');
  const lookupBody = JSON.stringify({ name: 'skill-517' });
  const lookupAnswer = await (
    await fetch(`${running.url}/v1/skills/lookup`, { method: 'POST', headers: auth, body: lookupBody })
  ).text();
  const plain = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(lookupAnswer);
    });
  });
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  const plainUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;

  let next = 0;
  let written = 0;
  const cases: BenchCase[] = [
    {
      name: `create skill from a ${(zipSize / 1048576).toFixed(2)} MiB zip`,
      iterations: ITERATIONS,
      warmup: 5,
      baseline: {
        name: 'fs write + fsync 1 MiB',
        run: async () => {
          const handle = await fs.promises.open(path.join(rawDir, `z${(written += 1)}`), 'w');
          await handle.writeFile(crypto.randomBytes(zipSize));
          await handle.sync();
          await handle.close();
        },
      },
      subject: {
        name: 'POST /v1/skills/create {file_id}',
        run: async () => {
          const res = await fetch(`${running.url}/v1/skills/create`, {
            method: 'POST',
            headers: auth,
            body: JSON.stringify({ file_id: fileIds[next++ % fileIds.length] }),
          });
          if (res.status !== 201) throw new Error(`create answered ${res.status}: ${await res.text()}`);
        },
      },
    },
    {
      name: `lookup latest by name, ${skillCount} skills (in process)`,
      iterations: 2000,
      baseline: { name: 'prepared SELECT 1', run: async () => void selectOne.get() },
      subject: {
        name: 'skills.lookup({name})',
        run: async () => void (await container.services.skills.lookup(owner, { name: `skill-${next++ % 1000}` })),
      },
    },
    {
      name: `lookup latest by name, ${skillCount} skills (HTTP)`,
      iterations: 400,
      baseline: {
        name: 'plain node:http JSON',
        run: async () => void (await (await fetch(plainUrl, { method: 'POST', body: lookupBody })).text()),
      },
      subject: {
        name: 'POST /v1/skills/lookup',
        run: async () =>
          void (await (
            await fetch(`${running.url}/v1/skills/lookup`, { method: 'POST', headers: auth, body: lookupBody })
          ).text()),
      },
    },
  ];
  return {
    cases,
    close: async () => {
      await new Promise<void>((resolve) => plain.close(() => resolve()));
      await running.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
      fs.rmSync(rawDir, { recursive: true, force: true });
    },
  };
}
