/**
 * Staging bytes in a local part file, shared by every BlobStore.
 *
 * A blob is addressed by its sha256, which is known only once the last byte has arrived, so every store first writes
 * the bytes to `<dir>/<pid>-<random>.part` (hashing as it goes, refusing more than the limit, fsynced), then moves
 * them into place: a rename on the local disk, a PutObject on S3. The writer's pid in the name lets a start-up sweep
 * tell a dead writer's leftovers from a live one's, whichever store they were meant for.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { PayloadTooLargeError } from '../domain/errors';
import type { StoredBytes } from '../domain/file';

export interface PartFile {
  path: string;
  stored: StoredBytes;
}

/**
 * Streams `source` into a new part file in `dir`.
 * @throws PayloadTooLargeError when more than `maxBytes` arrive; the part is removed.
 */
export async function writePartFile(dir: string, source: Readable, maxBytes: number): Promise<PartFile> {
  // Listen before the first await: a source that fails while the part file is being opened must not emit an
  // 'error' nobody hears (that is an uncaught exception); the loop below still sees the failure.
  const ignore = (): void => undefined;
  source.on('error', ignore);
  try {
    return await writeFrom(dir, source, maxBytes);
  } finally {
    source.off('error', ignore);
  }
}

async function writeFrom(dir: string, source: Readable, maxBytes: number): Promise<PartFile> {
  const partPath = path.join(dir, `${process.pid}-${randomBytes(8).toString('hex')}.part`);
  const handle = await createPart(dir, partPath);
  const md5 = createHash('md5');
  const sha256 = createHash('sha256');
  let bytes = 0;
  try {
    for await (const chunk of source) {
      const buffer = chunk as Buffer;
      bytes += buffer.length;
      if (bytes > maxBytes) throw new PayloadTooLargeError(maxBytes, 'Upload');
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
  return { path: partPath, stored: { bytes, md5: md5.digest('hex'), sha256: sha256.digest('hex') } };
}

/**
 * Opens a new part file, making `dir` only when it is missing: a metadata call fewer per blob than making it first
 * every time (bench `agents`: an execution's steps.json on each program replay, where such calls cost ~0.3 ms each).
 */
async function createPart(dir: string, partPath: string): Promise<fs.FileHandle> {
  try {
    return await fs.open(partPath, 'wx', 0o600);
  } catch (error) {
    if (!isMissing(error)) throw error;
    await fs.mkdir(dir, { recursive: true });
    return fs.open(partPath, 'wx', 0o600);
  }
}

/** Removes the part files in `dir` whose writer process is gone; returns how many. */
export async function sweepDeadParts(dir: string): Promise<number> {
  let removed = 0;
  for (const name of await listDir(dir)) {
    const pid = Number(name.split('-')[0]);
    const ownedByLiveWriter = Number.isInteger(pid) && (pid === process.pid || isAlive(pid));
    if (ownedByLiveWriter) continue;
    await fs.rm(path.join(dir, name), { force: true });
    removed += 1;
  }
  return removed;
}

/** The names in `dir`, or none when it does not exist. */
export async function listDir(dir: string): Promise<string[]> {
  try {
    return await fs.readdir(dir);
  } catch (error) {
    if (isMissing(error)) return [];
    throw error;
  }
}

export function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
