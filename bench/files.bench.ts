/**
 * Files benchmarks: the cost of Prism's upload path (HTTP + multipart + hashing + fsync'd content-addressed write +
 * SQLite insert) against the floor of writing the same bytes to disk with fsync, and of a file GET against a plain
 * node:http server answering the same JSON.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config/config';
import { startServer } from '../src/http-server';
import type { BenchCase } from './harness';

export async function filesBenchmarks(): Promise<{ cases: BenchCase[]; close: () => Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-bench-'));
  const config = loadConfig({ PRISM_DATA_DIR: dataDir, PORT: '0', PRISM_LOG_LEVEL: 'silent' });
  const running = await startServer(config, { announce: () => undefined });
  const key = fs.readFileSync(config.data.ownerKeyPath, 'utf8').trim();
  const rawDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-bench-raw-'));
  const payload = crypto.randomBytes(256 * 1024);

  let counter = 0;
  const uniquePayload = (): Buffer => {
    counter += 1;
    const copy = Buffer.from(payload);
    copy.writeUInt32BE(counter, 0);
    return copy;
  };

  const upload = async (): Promise<string> => {
    const form = new FormData();
    form.append('file', new Blob([uniquePayload()]), 'bench.bin');
    const res = await fetch(`${running.url}/v1/files?purpose=vision`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    const body = (await res.json()) as { id: string };
    return body.id;
  };

  const fileId = await upload();
  const record = await (
    await fetch(`${running.url}/v1/files/${fileId}`, { headers: { authorization: `Bearer ${key}` } })
  ).text();
  const plain = http.createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(record);
  });
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  const plainUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;

  const cases: BenchCase[] = [
    {
      name: 'upload 256 KiB file',
      iterations: 60,
      baseline: {
        name: 'fs write + fsync',
        run: async () => {
          const handle = await fs.promises.open(path.join(rawDir, `f${counter}`), 'w');
          await handle.writeFile(uniquePayload());
          await handle.sync();
          await handle.close();
        },
      },
      subject: { name: 'POST /v1/files', run: async () => void (await upload()) },
    },
    {
      name: 'get file record',
      iterations: 400,
      baseline: {
        name: 'plain node:http JSON',
        run: async () => void (await (await fetch(plainUrl)).text()),
      },
      subject: {
        name: 'GET /v1/files/{id}',
        run: async () =>
          void (await (
            await fetch(`${running.url}/v1/files/${fileId}`, { headers: { authorization: `Bearer ${key}` } })
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
