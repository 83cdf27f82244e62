/**
 * The backend seam: the one place that turns configuration into the backend (records, checkpoints, bytes, queue,
 * limits) and its closers. SQLite and the local blob folder are the default; `PRISM_DATABASE_URL=postgres://…`
 * puts records and checkpoints on PostgreSQL. The slots for Redis (queue, limits) and S3 (blobs) are
 * `sharedStateFor` and `blobStoreFor` below.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFsBlobStore } from '../blobs/fs.blob-store';
import type { BlobStore } from '../blobs/types';
import type { Config } from '../config/config';
import { closeAll } from '../lib/close-all';
import type { Logger } from '../lib/logger';
import { createMemorySharedState } from './memory-shared';
import { openPostgresRecords } from './postgres';
import { openSqliteRecords } from './sqlite';
import type { Backend, RecordsBackend, SharedState } from './types';

export type { Backend, RecordsBackend, SharedState } from './types';

/** Records and checkpoints: PostgreSQL when `PRISM_DATABASE_URL` is set, else SQLite in the data folder. */
export function openRecords(config: Config, logger: Logger): Promise<RecordsBackend> {
  return config.database.url ? openPostgresRecords(config, logger) : openSqliteRecords(config, logger);
}

/** Bytes: the content-addressed local folder. (Slot: an S3 store when `PRISM_BLOB_URL` is set.) */
export function blobStoreFor(config: Config): BlobStore {
  return createFsBlobStore(config.data.blobDir);
}

/**
 * A blob store named by a location, for `prism db copy --blobs`: a folder path or `file://` URL. (Slot: `s3://`
 * once the S3 store exists; until then it is refused with that said.)
 */
export function openBlobStore(location: string): BlobStore {
  if (location.startsWith('file://')) return createFsBlobStore(fileURLToPath(location));
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location)) {
    throw new Error(`no blob store for ${location.split(':')[0]}:// locations in this build (folders and file:// are)`);
  }
  return createFsBlobStore(path.resolve(location));
}

/** Queue and limit windows: process memory. (Slot: Redis when `PRISM_REDIS_URL` is set.) */
export function sharedStateFor(_config: Config, _logger: Logger): SharedState {
  return createMemorySharedState();
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
