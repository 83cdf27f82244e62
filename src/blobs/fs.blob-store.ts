/**
 * BlobStore on the local disk.
 *
 * Layout: `<dir>/sha256/ab/cd/<hash>` for blobs and `<dir>/tmp/<pid>-<random>.part` while writing. A write goes
 * to a part file, is fsynced, then renamed into place (rename is atomic on one filesystem) and the folder is
 * fsynced, so after a crash a blob is either whole or absent. The writer's pid in the part name lets the start-up
 * sweep tell a dead writer's leftovers from a live one's.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { PayloadTooLargeError } from '../domain/errors';
import type { StoredBytes } from '../domain/file';
import type { BlobStore, StagedBlob } from './types';

const HASH_PATTERN = /^[0-9a-f]{64}$/;

export function createFsBlobStore(dir: string): BlobStore {
  const tmpDir = path.join(dir, 'tmp');
  const blobRoot = path.join(dir, 'sha256');

  const blobPath = (sha256: string): string => {
    if (!HASH_PATTERN.test(sha256)) throw new Error('invalid blob hash');
    return path.join(blobRoot, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
  };

  async function stage(source: Readable, options: { maxBytes: number }): Promise<StagedBlob> {
    // Listen before the first await: a source that fails while the part file is being opened must not emit an
    // 'error' nobody hears (that is an uncaught exception); the loop below still sees the failure.
    const ignore = (): void => undefined;
    source.on('error', ignore);
    try {
      return await stageFrom(source, options);
    } finally {
      source.off('error', ignore);
    }
  }

  async function stageFrom(source: Readable, options: { maxBytes: number }): Promise<StagedBlob> {
    await fs.mkdir(tmpDir, { recursive: true });
    const partPath = path.join(tmpDir, `${process.pid}-${randomBytes(8).toString('hex')}.part`);
    const handle = await fs.open(partPath, 'wx', 0o600);
    const md5 = createHash('md5');
    const sha256 = createHash('sha256');
    let bytes = 0;
    try {
      for await (const chunk of source) {
        const buffer = chunk as Buffer;
        bytes += buffer.length;
        if (bytes > options.maxBytes) throw new PayloadTooLargeError(options.maxBytes, 'Upload');
        md5.update(buffer);
        sha256.update(buffer);
        await handle.write(buffer);
      }
      await handle.sync();
    } catch (error) {
      await handle.close().catch(() => undefined);
      await fs.rm(partPath, { force: true });
      throw error;
    }
    await handle.close();
    const stored: StoredBytes = { bytes, md5: md5.digest('hex'), sha256: sha256.digest('hex') };
    const finalPath = blobPath(stored.sha256);
    let committed = false;
    return {
      stored,
      async commit() {
        if (committed) return;
        await fs.mkdir(path.dirname(finalPath), { recursive: true });
        await fs.rename(partPath, finalPath);
        await syncDirectory(path.dirname(finalPath));
        committed = true;
      },
      async discard() {
        if (!committed) await fs.rm(partPath, { force: true });
      },
    };
  }

  async function open(sha256: string): Promise<Readable | null> {
    const file = blobPath(sha256);
    try {
      await fs.access(file);
    } catch {
      return null;
    }
    return createReadStream(file);
  }

  async function read(sha256: string): Promise<Buffer | null> {
    try {
      return await fs.readFile(blobPath(sha256));
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async function remove(sha256: string): Promise<void> {
    await fs.rm(blobPath(sha256), { force: true });
  }

  async function sweep(referenced: Set<string>): Promise<{ partsRemoved: number; orphansRemoved: number }> {
    let partsRemoved = 0;
    for (const name of await listDir(tmpDir)) {
      const pid = Number(name.split('-')[0]);
      const ownedByLiveWriter = Number.isInteger(pid) && (pid === process.pid || isAlive(pid));
      if (ownedByLiveWriter) continue;
      await fs.rm(path.join(tmpDir, name), { force: true });
      partsRemoved += 1;
    }
    let orphansRemoved = 0;
    for (const a of await listDir(blobRoot)) {
      for (const b of await listDir(path.join(blobRoot, a))) {
        for (const name of await listDir(path.join(blobRoot, a, b))) {
          if (referenced.has(name)) continue;
          await fs.rm(path.join(blobRoot, a, b, name), { force: true });
          orphansRemoved += 1;
        }
      }
    }
    return { partsRemoved, orphansRemoved };
  }

  return { stage, open, read, delete: remove, sweep };
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return await fs.readdir(dir);
  } catch (error) {
    if (isMissing(error)) return [];
    throw error;
  }
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}
