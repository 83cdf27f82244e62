/**
 * Starts the real app on 127.0.0.1 with a real SQLite file in a fresh temporary data folder.
 * Each test file builds its own app: no shared state between files.
 *
 * `PRISM_TEST_BACKEND` runs the same apps on the shared backends instead, one configuration of a deployment each:
 * - `postgres` (with `PRISM_TEST_DATABASE_URL`): records on PostgreSQL;
 * - `postgres+redis` (and `PRISM_TEST_REDIS_URL`): also rate limits, guest spend, signals and the job queue on Redis;
 * - `postgres+redis+s3`: also blobs on an S3 wire-protocol server on loopback (s3rver).
 * Each app gets a schema, a Redis key prefix and an S3 folder of its own, all derived from its data folder (so an
 * app started again on the folder, or a second replica on it, finds the same state), removed by close().
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/config';
import type { Container } from '../../src/container';
import type { Tier } from '../../src/domain/account';
import type { Logger } from '../../src/lib/logger';
import { startServer } from '../../src/http-server';
import { dropTestSchema, TEST_DATABASE_URL, testSchemaName } from './pg-schema';
import { deleteKeys, testRedisUrl } from './redis';
import { startS3ServerProcess, type TestS3Server } from './s3-server';

const BACKEND_PARTS = new Set((process.env.PRISM_TEST_BACKEND ?? '').split('+').filter((p) => p !== ''));
const UNKNOWN = [...BACKEND_PARTS].filter((p) => !['sqlite', 'postgres', 'redis', 's3'].includes(p));
if (UNKNOWN.length > 0) throw new Error(`PRISM_TEST_BACKEND: unknown part(s) ${UNKNOWN.join(', ')}`);

/** True when the integration suites run their apps on PostgreSQL. */
export const APP_ON_POSTGRES = BACKEND_PARTS.has('postgres');
/** True when they share state through Redis (limits, guest spend, signals, the BullMQ job queue). */
export const APP_ON_REDIS = BACKEND_PARTS.has('redis');
/** True when they keep blobs on S3 (s3rver on loopback). */
export const APP_ON_S3 = BACKEND_PARTS.has('s3');
if (APP_ON_POSTGRES && !TEST_DATABASE_URL) {
  throw new Error('PRISM_TEST_BACKEND=postgres needs PRISM_TEST_DATABASE_URL');
}
if (APP_ON_REDIS && !testRedisUrl) throw new Error('PRISM_TEST_BACKEND with redis needs PRISM_TEST_REDIS_URL');
if ((APP_ON_REDIS || APP_ON_S3) && !APP_ON_POSTGRES) {
  // Redis and S3 are for several replicas, which share records only through PostgreSQL.
  throw new Error('PRISM_TEST_BACKEND: redis and s3 come with postgres (e.g. postgres+redis+s3)');
}

export interface TestApp {
  url: string;
  dataDir: string;
  ownerKey: string;
  container: Container;
  /** Creates a key for a new user of `org` (created if missing). */
  createKey(org: string, tier?: Tier): Promise<string>;
  close(): Promise<void>;
  /** Stops the server but keeps the data folder (to start again on it). */
  stop(): Promise<void>;
}

/**
 * Settings that keep a test on the single-machine default (SQLite, this process's memory, local blobs) whatever
 * PRISM_TEST_BACKEND says: the test is about that configuration itself (the SQLite file, the blob folder).
 */
export const ON_SQLITE: Record<string, string> = { PRISM_DATABASE_URL: '', PRISM_REDIS_URL: '', PRISM_BLOB_URL: '' };

/** The S3 server of each data folder's apps (one per app; they share the folder's S3 directory). */
const s3Servers = new Map<string, TestS3Server[]>();

const tagOf = (dataDir: string): string => createHash('sha256').update(dataDir).digest('hex').slice(0, 16);

/**
 * The shared-backend settings of the app on `dataDir` (empty on the default): a CLI run beside a test app passes
 * them so both work on the same records, state and blobs.
 */
export function databaseEnvFor(dataDir: string): Record<string, string> {
  const env: Record<string, string> = {};
  if (APP_ON_POSTGRES && TEST_DATABASE_URL) {
    Object.assign(env, { PRISM_DATABASE_URL: TEST_DATABASE_URL, PRISM_DATABASE_SCHEMA: testSchemaName(dataDir) });
  }
  if (APP_ON_REDIS && testRedisUrl) {
    Object.assign(env, { PRISM_REDIS_URL: testRedisUrl, PRISM_REDIS_PREFIX: redisPrefixOf(dataDir) });
  }
  const s3 = s3Servers.get(dataDir)?.[0];
  if (s3) Object.assign(env, { PRISM_BLOB_URL: s3.blobUrl(), ...s3.env });
  return env;
}

const redisPrefixOf = (dataDir: string): string => `prism-test:${tagOf(dataDir)}:`;
const s3FolderOf = (dataDir: string): string => path.join(os.tmpdir(), `prism-test-s3-${tagOf(dataDir)}`);

/** Starts an S3 server for an app on `dataDir`, over the folder's S3 directory (kept while the folder is), in
 * a process of its own. */
async function startS3For(dataDir: string): Promise<TestS3Server> {
  const server = await startS3ServerProcess('prism-test', s3FolderOf(dataDir));
  s3Servers.set(dataDir, [...(s3Servers.get(dataDir) ?? []), server]);
  return server;
}

async function stopS3(dataDir: string, server: TestS3Server | null, removeData: boolean): Promise<void> {
  if (!server) return;
  await server.close({ keepData: !removeData });
  const left = (s3Servers.get(dataDir) ?? []).filter((s) => s !== server);
  if (left.length > 0) s3Servers.set(dataDir, left);
  else s3Servers.delete(dataDir);
}

/**
 * `logger` replaces the silent one (a test that reads what the app logs passes a collecting logger); `clock` is the
 * clock LangGraph crons fire by (a test steps it).
 */
export async function startTestApp(
  env: Record<string, string> = {},
  existingDataDir?: string,
  options: { logger?: Logger; clock?: () => Date } = {},
): Promise<TestApp> {
  const dataDir = existingDataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'prism-test-'));
  // A test that pins a setting to '' (ON_SQLITE) keeps that part on the default.
  const pinned = (name: string): boolean => name in env;
  const s3 = APP_ON_S3 && !pinned('PRISM_BLOB_URL') ? await startS3For(dataDir) : null;
  const shared = databaseEnvFor(dataDir);
  const settings = { ...shared, ...env };
  const schema = settings.PRISM_DATABASE_URL ? (shared.PRISM_DATABASE_SCHEMA ?? null) : null;
  const redisPrefix = settings.PRISM_REDIS_URL ? (shared.PRISM_REDIS_PREFIX ?? null) : null;
  const config = loadConfig({
    PRISM_DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    PRISM_LOG_LEVEL: process.env.PRISM_TEST_LOG_LEVEL ?? 'silent',
    ...settings,
  });
  let running: Awaited<ReturnType<typeof startServer>>;
  try {
    running = await startServer(config, {
      announce: () => undefined,
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
    });
  } catch (error) {
    await stopS3(dataDir, s3, false);
    throw error;
  }
  const ownerKey = fs.readFileSync(config.data.ownerKeyPath, 'utf8').trim();
  return {
    url: running.url,
    dataDir,
    ownerKey,
    container: running.container,
    async createKey(org, tier = 'free') {
      return (await running.container.services.accounts.createKey({ org, tier })).key;
    },
    async close() {
      await running.close();
      await stopS3(dataDir, s3, true);
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (schema) await dropTestSchema(schema);
      if (redisPrefix && testRedisUrl) await deleteKeys(testRedisUrl, redisPrefix);
    },
    async stop() {
      await running.close();
      await stopS3(dataDir, s3, false);
    },
  };
}

/** fetch with an optional bearer key; JSON bodies are serialised. */
export async function call(
  url: string,
  init: {
    method?: string;
    key?: string;
    json?: unknown;
    headers?: Record<string, string>;
    body?: RequestInit['body'];
  } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.key !== undefined) headers.authorization = `Bearer ${init.key}`;
  let body = init.body;
  if (init.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.json);
  }
  return fetch(url, {
    method: init.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    ...(body === undefined ? {} : { body }),
  });
}

/** Uploads bytes as the multipart part `file`. */
export async function uploadFile(
  baseUrl: string,
  key: string | undefined,
  content: Buffer | string,
  options: { filename?: string; query?: string; prefix?: string; fields?: Record<string, string> } = {},
): Promise<Response> {
  const form = new FormData();
  for (const [name, value] of Object.entries(options.fields ?? {})) form.append(name, value);
  form.append('file', new Blob([content]), options.filename ?? 'hello.txt');
  const prefix = options.prefix ?? '/v1/files';
  return call(`${baseUrl}${prefix}${options.query ? `?${options.query}` : ''}`, {
    method: 'POST',
    body: form,
    ...(key === undefined ? {} : { key }),
  });
}

/**
 * The sha256 names of the blobs the app on `dataDir` keeps, sorted, wherever they are: the folder's `blobs/sha256`
 * by default, the S3 server's folder under PRISM_TEST_BACKEND=…+s3.
 */
export function storedBlobs(dataDir: string): string[] {
  const s3Folder = s3Servers.has(dataDir) ? s3FolderOf(dataDir) : null;
  if (s3Folder) {
    return listTree(s3Folder)
      .filter((p) => p.endsWith('._S3rver_object'))
      .map((p) => path.basename(p, '._S3rver_object'))
      .sort();
  }
  return listTree(path.join(dataDir, 'blobs', 'sha256'))
    .map((p) => path.basename(p))
    .sort();
}

/** Every file under `dir`, relative, sorted. */
export function listTree(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter((p) => fs.statSync(path.join(dir, p)).isFile())
    .sort();
}
