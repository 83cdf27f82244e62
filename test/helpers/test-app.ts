/**
 * Starts the real app on 127.0.0.1 with a real SQLite file in a fresh temporary data folder.
 * Each test file builds its own app: no shared state between files.
 *
 * `PRISM_TEST_BACKEND=postgres` (with `PRISM_TEST_DATABASE_URL`) runs the same app on PostgreSQL instead: each app
 * gets a schema of its own, derived from its data folder (so an app started again on the folder finds its records),
 * dropped by close().
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/config';
import type { Container } from '../../src/container';
import type { Tier } from '../../src/domain/account';
import type { Logger } from '../../src/lib/logger';
import { startServer } from '../../src/http-server';
import { dropTestSchema, TEST_DATABASE_URL, testSchemaName } from './pg-schema';

/** True when the integration suites run their apps on PostgreSQL. */
export const APP_ON_POSTGRES = process.env.PRISM_TEST_BACKEND === 'postgres';
if (APP_ON_POSTGRES && !TEST_DATABASE_URL) {
  throw new Error('PRISM_TEST_BACKEND=postgres needs PRISM_TEST_DATABASE_URL');
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

/** Settings that keep a test on SQLite whatever PRISM_TEST_BACKEND says (the test is about SQLite itself). */
export const ON_SQLITE: Record<string, string> = { PRISM_DATABASE_URL: '' };

/**
 * The database settings of the app on `dataDir` (empty on SQLite): a CLI run beside a test app passes them so both
 * work on the same records.
 */
export function databaseEnvFor(dataDir: string): Record<string, string> {
  if (!APP_ON_POSTGRES || !TEST_DATABASE_URL) return {};
  return { PRISM_DATABASE_URL: TEST_DATABASE_URL, PRISM_DATABASE_SCHEMA: testSchemaName(dataDir) };
}

/** `logger` replaces the silent one (a test that reads what the app logs passes a collecting logger). */
export async function startTestApp(
  env: Record<string, string> = {},
  existingDataDir?: string,
  options: { logger?: Logger } = {},
): Promise<TestApp> {
  const dataDir = existingDataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'prism-test-'));
  const database = databaseEnvFor(dataDir);
  const schema = { ...database, ...env }.PRISM_DATABASE_URL ? (database.PRISM_DATABASE_SCHEMA ?? null) : null;
  const config = loadConfig({
    PRISM_DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    PRISM_LOG_LEVEL: 'silent',
    ...database,
    ...env,
  });
  const running = await startServer(config, {
    announce: () => undefined,
    ...(options.logger ? { logger: options.logger } : {}),
  });
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
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (schema) await dropTestSchema(schema);
    },
    stop: () => running.close(),
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

/** Every file under `dir`, relative, sorted. */
export function listTree(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter((p) => fs.statSync(path.join(dir, p)).isFile())
    .sort();
}
