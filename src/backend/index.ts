/**
 * The backend seam: the one place that turns configuration into the backend (records, checkpoints, bytes, queue,
 * limits) and its closers. SQLite and the local blob folder are the default; `PRISM_DATABASE_URL=postgres://…`
 * puts records and checkpoints on PostgreSQL, `PRISM_REDIS_URL=redis://…` the queue, limits and signals on Redis
 * (`sharedStateFor`), `PRISM_BLOB_URL=s3://…` the bytes on an S3-compatible bucket (`blobStoreFor`).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFsBlobStore } from './local/blob-store';
import type * as S3Module from './s3/blob-store';
import { parseS3BlobUrl } from '../blobs/s3-location';
import type { BlobStore } from '../blobs/types';
import type { Config } from '../config/config';
import { closeAll } from '../lib/close-all';
import type { Logger } from '../lib/logger';
import { createMemorySharedState } from './local/shared-state';
import { createRedisSharedState } from './redis/shared-state';
import { openPostgresRecords } from './postgres/records';
import { openSqliteRecords } from './sqlite/records';
import type { Backend, RecordsBackend, SharedState } from './types';

export type { Backend, RecordsBackend, SharedState } from './types';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Records and checkpoints: PostgreSQL when `PRISM_DATABASE_URL` is set, else SQLite in the data folder. */
export function openRecords(config: Config, logger: Logger): Promise<RecordsBackend> {
  return config.database.url ? openPostgresRecords(config, logger) : openSqliteRecords(config, logger);
}

/**
 * Bytes: the content-addressed local folder, or the S3-compatible bucket of `PRISM_BLOB_URL` (the AWS SDK loads only
 * then). With several replicas another may have stored a blob whose record it has not written yet, so the start-up
 * sweep leaves unreferenced blobs younger than a day.
 */
export function blobStoreFor(config: Config): BlobStore {
  const orphanMinAgeMs = config.redis.url || config.database.url ? DAY_MS : 0;
  const s3 = config.blobs.s3;
  if (!s3) return createFsBlobStore(config.data.blobDir, { orphanMinAgeMs });
  return loadS3().createS3BlobStore({ ...s3, partsDir: path.join(config.data.blobDir, 'tmp'), orphanMinAgeMs });
}

/**
 * A blob store named by a location, for `prism db copy --blobs`: a folder path, a `file://` URL, or an `s3://` URL
 * (credentials as for PRISM_BLOB_URL: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, else the SDK's default chain).
 */
export function openBlobStore(location: string, config: Config): BlobStore {
  if (location.startsWith('file://')) return createFsBlobStore(fileURLToPath(location));
  if (location.startsWith('s3://')) {
    const target = parseS3BlobUrl(location, config.blobs.s3?.region);
    return loadS3().createS3BlobStore({
      ...target,
      credentials: config.blobs.s3?.credentials ?? config.blobs.awsCredentials,
      partsDir: path.join(config.data.blobDir, 'tmp'),
    });
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location)) {
    throw new Error(`no blob store for ${location.split(':')[0]}:// locations (folders, file:// and s3:// are)`);
  }
  return createFsBlobStore(path.resolve(location));
}

function loadS3(): typeof S3Module {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./s3/blob-store') as typeof S3Module;
}

/** Queue, limits, guest spend and signals: process memory, or Redis when `PRISM_REDIS_URL` is set. */
export function sharedStateFor(config: Config, logger: Logger): SharedState {
  return config.redis.url ? createRedisSharedState(config, config.redis.url, logger) : createMemorySharedState();
}

/** Builds the whole backend; on a failure part-way, closes what was already opened. */
export async function createBackend(config: Config, logger: Logger): Promise<Backend> {
  const records = await openRecords(config, logger);
  try {
    const blobs = blobStoreFor(config);
    const shared = sharedStateFor(config, logger);
    return { ...records, blobs, shared, closers: [...records.closers, ...shared.closers] };
  } catch (error) {
    await closeAll([...records.closers].reverse()).catch(() => undefined);
    throw error;
  }
}
