/**
 * BlobStore on the local disk.
 *
 * Layout: `<dir>/sha256/ab/cd/<hash>` for blobs and `<dir>/tmp/<pid>-<random>.part` while writing. A write goes
 * to a part file, is fsynced, then renamed into place (rename is atomic on one filesystem) and the folder is
 * fsynced, so after a crash a blob is either whole or absent. The writer's pid in the part name lets the start-up
 * sweep tell a dead writer's leftovers from a live one's.
 */
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { isMissing, listDir, sweepDeadParts, writePartFile } from '../../blobs/part-file';
import type { BlobStore, StagedBlob } from '../../blobs/types';

const HASH_PATTERN = /^[0-9a-f]{64}$/;

export interface FsBlobStoreOptions {
  /**
   * Unreferenced blobs younger than this survive a sweep (default 0: one process owns the folder). With several
   * replicas on one folder, another may have written a blob whose record it has not written yet.
   */
  orphanMinAgeMs?: number;
}

export function createFsBlobStore(dir: string, options: FsBlobStoreOptions = {}): BlobStore {
  const orphanMinAgeMs = options.orphanMinAgeMs ?? 0;
  const tmpDir = path.join(dir, 'tmp');
  const blobRoot = path.join(dir, 'sha256');

  const blobPath = (sha256: string): string => {
    if (!HASH_PATTERN.test(sha256)) throw new Error('invalid blob hash');
    return path.join(blobRoot, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
  };

  async function stage(source: Readable, options: { maxBytes: number }): Promise<StagedBlob> {
    const part = await writePartFile(tmpDir, source, options.maxBytes);
    const finalPath = blobPath(part.stored.sha256);
    let committed = false;
    return {
      stored: part.stored,
      async commit() {
        if (committed) return;
        // The blob's folder is made only when the rename finds it missing (one metadata call fewer per blob).
        try {
          await fs.rename(part.path, finalPath);
        } catch (error) {
          if (!isMissing(error)) throw error;
          await fs.mkdir(path.dirname(finalPath), { recursive: true });
          await fs.rename(part.path, finalPath);
        }
        await syncDirectory(path.dirname(finalPath));
        committed = true;
      },
      async discard() {
        if (!committed) await fs.rm(part.path, { force: true });
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
    const partsRemoved = await sweepDeadParts(tmpDir);
    const cutoff = Date.now() - orphanMinAgeMs;
    let orphansRemoved = 0;
    for (const a of await listDir(blobRoot)) {
      for (const b of await listDir(path.join(blobRoot, a))) {
        for (const name of await listDir(path.join(blobRoot, a, b))) {
          if (referenced.has(name)) continue;
          const file = path.join(blobRoot, a, b, name);
          if (orphanMinAgeMs > 0 && (await fs.stat(file)).mtimeMs > cutoff) continue;
          await fs.rm(file, { force: true });
          orphansRemoved += 1;
        }
      }
    }
    return { partsRemoved, orphansRemoved };
  }

  return { stage, open, read, delete: remove, sweep, close: () => undefined };
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
