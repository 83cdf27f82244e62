/**
 * An S3 wire-protocol server on loopback (s3rver), for the S3 blob store's tests: no real S3 is reachable here.
 * Each server gets its own temporary folder (or the one given, so a server started again finds the objects) and one
 * bucket, and listens on a free port of 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: Record<string, unknown>) => S3rverInstance;

export interface TestS3Server {
  endpoint: string;
  bucket: string;
  /** `PRISM_BLOB_URL` for this server. */
  blobUrl(prefix?: string): string;
  /** s3rver's fixed credentials, as the SDK's environment variables. */
  env: { AWS_ACCESS_KEY_ID: string; AWS_SECRET_ACCESS_KEY: string };
  /** Stops the server; its folder is removed unless `keepData`. */
  close(options?: { keepData?: boolean }): Promise<void>;
}

export async function startS3Server(bucket = 'prism-test', folder?: string): Promise<TestS3Server> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const S3rver = require('s3rver') as S3rverConstructor;
  const directory = folder ?? fs.mkdtempSync(path.join(os.tmpdir(), 'prism-s3rver-'));
  fs.mkdirSync(directory, { recursive: true });
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const address = await server.run();
  const endpoint = `http://127.0.0.1:${address.port}`;
  return {
    endpoint,
    bucket,
    blobUrl: (prefix = '') => `s3://${bucket}/${prefix}?endpoint=${encodeURIComponent(endpoint)}`,
    env: { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' },
    async close({ keepData = false } = {}) {
      await server.close();
      if (!keepData) fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}

/**
 * The same, in a process of its own: for test apps whose tests block their event loop (spawnSync of the CLI, which
 * reads the same bucket).
 */
export async function startS3ServerProcess(bucket: string, folder: string): Promise<TestS3Server> {
  fs.mkdirSync(folder, { recursive: true });
  const child = spawn(process.execPath, [path.join(__dirname, 's3-server-child.js'), folder, bucket], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = /^(\d+)\n/.exec(out);
      if (line?.[1]) resolve(Number(line[1]));
    });
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`s3rver exited with ${code}: ${err}`)));
  });
  // It never keeps the test process alive, and goes with it.
  child.unref();
  child.stdout.destroy();
  child.stderr.destroy();
  const killChild = (): void => void child.kill('SIGTERM');
  process.once('exit', killChild);
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    blobUrl: (prefix = '') => `s3://${bucket}/${prefix}?endpoint=${encodeURIComponent(endpoint)}`,
    env: { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' },
    async close({ keepData = false } = {}) {
      process.off('exit', killChild);
      child.kill('SIGTERM');
      await exited;
      if (!keepData) fs.rmSync(folder, { recursive: true, force: true });
    },
  };
}
