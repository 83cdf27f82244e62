/**
 * Safe unpacking of skill zips.
 *
 * A skill bundle comes from a caller, so every entry is checked before a byte of it is trusted: names are
 * normalised and refused when they climb out (`..`), are absolute or carry a drive letter; symlinks and encrypted
 * entries are refused; entry count, per-entry and total uncompressed size and the compression ratio are capped on
 * the sizes the zip declares and again on the bytes actually inflated (yauzl refuses an entry whose stream differs
 * from its header). Every refusal is an {@link InvalidSkillBundleError} naming the entry and the rule; the reader
 * never writes anything, so a refused bundle leaves nothing behind.
 */
import path from 'node:path';
import yauzl from 'yauzl';
import { InvalidSkillBundleError } from '../../domain/errors';

/** Unpacking limits (settings `PRISM_SKILL_MAX_*`). */
export interface BundleLimits {
  maxEntries: number;
  maxEntryBytes: number;
  maxTotalBytes: number;
  /** Largest uncompressed/compressed ratio of one entry (entries under {@link RATIO_FLOOR_BYTES} are exempt). */
  maxRatio: number;
}

export const DEFAULT_BUNDLE_LIMITS: BundleLimits = {
  maxEntries: 1000,
  maxEntryBytes: 10 * 1024 * 1024,
  maxTotalBytes: 50 * 1024 * 1024,
  maxRatio: 100,
};

/**
 * Entries smaller than this are never refused for their ratio: a few KiB of repetitive text legitimately deflate
 * more than 100:1, and nothing that small can exhaust memory.
 */
export const RATIO_FLOOR_BYTES = 64 * 1024;

/** One regular file of a bundle. */
export interface BundleEntry {
  /** Normalised POSIX path inside the bundle. */
  path: string;
  sizeBytes: number;
  data: Buffer;
}

interface RawEntry {
  fileNameRaw: Buffer;
  generalPurposeBitFlag: number;
  extraFields: Array<{ id: number; data: Buffer }>;
  externalFileAttributes: number;
  uncompressedSize: number;
  compressedSize: number;
  isEncrypted(): boolean;
}

type DecodeName = (flags: number, raw: Buffer, extra: RawEntry['extraFields'], strict: boolean) => string;
const decodeName = (yauzl as unknown as { getFileNameLowLevel: DecodeName }).getFileNameLowLevel;

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

/**
 * Checks and unpacks every regular file of `zip`; `keep` decides which files' bytes are kept in memory (the others
 * are still inflated and checked, then dropped).
 * @throws InvalidSkillBundleError on the first rule broken.
 */
export async function readSkillBundle(
  zip: Buffer,
  limits: BundleLimits,
  keep: (entryPath: string) => boolean = () => true,
): Promise<BundleEntry[]> {
  let zipfile: yauzl.ZipFile;
  try {
    zipfile = await openZip(zip);
  } catch (error) {
    throw new InvalidSkillBundleError('not_a_zip', null, `the upload is not a readable zip (${zipMessage(error)})`);
  }
  try {
    if (zipfile.entryCount > limits.maxEntries) {
      throw new InvalidSkillBundleError(
        'too_many_entries',
        null,
        `${zipfile.entryCount} entries; at most ${limits.maxEntries} are allowed`,
      );
    }
    const entries: BundleEntry[] = [];
    const seen = new Set<string>();
    let total = 0;
    for (;;) {
      const entry = await nextEntry(zipfile);
      if (entry === null) break;
      const raw = entry as unknown as RawEntry;
      const name = checkName(decodeName(raw.generalPurposeBitFlag, raw.fileNameRaw, raw.extraFields, true));
      const isDirectory = name.endsWith('/');
      const normal = isDirectory ? name.slice(0, -1) : name;
      if (seen.has(normal)) throw new InvalidSkillBundleError('duplicate_name', normal, 'the name appears twice');
      seen.add(normal);
      if (((raw.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK) {
        throw new InvalidSkillBundleError('symlink', normal, 'symbolic links are not allowed in a skill');
      }
      if (raw.isEncrypted()) {
        throw new InvalidSkillBundleError('encrypted', normal, 'encrypted entries are not allowed');
      }
      if (isDirectory) continue;
      checkDeclaredSize(normal, raw, limits, total);
      const data = await inflate(zipfile, entry, normal, limits, total);
      total += data.length;
      entries.push({ path: normal, sizeBytes: data.length, data: keep(normal) ? data : Buffer.alloc(0) });
    }
    return entries;
  } finally {
    zipfile.close();
  }
}

/** Normalises an entry name, refusing absolute, drive, backslash and `..` names. */
function checkName(rawName: string): string {
  const shown = rawName.slice(0, 200);
  // eslint-disable-next-line no-control-regex
  if (rawName === '' || /[\u0000-\u001f]/.test(rawName)) {
    throw new InvalidSkillBundleError('invalid_name', shown, 'empty names and control characters are not allowed');
  }
  if (/^[a-zA-Z]:/.test(rawName) || rawName.startsWith('/') || rawName.startsWith('\\')) {
    throw new InvalidSkillBundleError('absolute_path', shown, 'absolute and drive paths are not allowed');
  }
  if (rawName.split(/[\\/]/).includes('..')) {
    throw new InvalidSkillBundleError('path_traversal', shown, "'..' path segments are not allowed");
  }
  if (rawName.includes('\\')) {
    throw new InvalidSkillBundleError('invalid_name', shown, 'backslashes are not allowed in entry names');
  }
  const normal = path.posix.normalize(rawName);
  if (normal === '.' || normal === './' || normal.startsWith('../')) {
    throw new InvalidSkillBundleError('path_traversal', shown, 'the name does not stay inside the bundle');
  }
  return normal.startsWith('./') ? normal.slice(2) : normal;
}

function checkDeclaredSize(name: string, raw: RawEntry, limits: BundleLimits, totalSoFar: number): void {
  if (raw.uncompressedSize > limits.maxEntryBytes) {
    throw new InvalidSkillBundleError(
      'entry_too_large',
      name,
      `${raw.uncompressedSize} bytes uncompressed; at most ${limits.maxEntryBytes} per entry`,
    );
  }
  if (totalSoFar + raw.uncompressedSize > limits.maxTotalBytes) {
    throw new InvalidSkillBundleError(
      'total_too_large',
      name,
      `the bundle passes ${limits.maxTotalBytes} bytes uncompressed in total`,
    );
  }
  if (raw.uncompressedSize > RATIO_FLOOR_BYTES && raw.uncompressedSize > limits.maxRatio * raw.compressedSize) {
    const ratio = Math.round(raw.uncompressedSize / Math.max(1, raw.compressedSize));
    throw new InvalidSkillBundleError(
      'compression_ratio',
      name,
      `compression ratio ${ratio}:1 is over the limit of ${limits.maxRatio}:1`,
    );
  }
}

/** Inflates one entry, counting bytes as they come so a lying header cannot push past the limits. */
async function inflate(
  zipfile: yauzl.ZipFile,
  entry: yauzl.Entry,
  name: string,
  limits: BundleLimits,
  totalSoFar: number,
): Promise<Buffer> {
  const stream = await new Promise<NodeJS.ReadableStream>((resolve, reject) => {
    zipfile.openReadStream(entry, (error, readStream) => (error ? reject(error) : resolve(readStream)));
  }).catch((error: unknown) => {
    throw new InvalidSkillBundleError('not_a_zip', name, `the entry cannot be read (${zipMessage(error)})`);
  });
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      const buffer = chunk as Buffer;
      size += buffer.length;
      if (size > limits.maxEntryBytes) {
        throw new InvalidSkillBundleError('entry_too_large', name, `more than ${limits.maxEntryBytes} bytes`);
      }
      if (totalSoFar + size > limits.maxTotalBytes) {
        throw new InvalidSkillBundleError('total_too_large', name, `more than ${limits.maxTotalBytes} bytes in total`);
      }
      chunks.push(buffer);
    }
  } catch (error) {
    (stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
    if (error instanceof InvalidSkillBundleError) throw error;
    throw new InvalidSkillBundleError('not_a_zip', name, `the entry cannot be inflated (${zipMessage(error)})`);
  }
  return Buffer.concat(chunks, size);
}

function openZip(zip: Buffer): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(
      zip,
      { lazyEntries: true, decodeStrings: false, validateEntrySizes: true, autoClose: false },
      (error, zipfile) => (error ? reject(error) : resolve(zipfile)),
    );
  });
}

function nextEntry(zipfile: yauzl.ZipFile): Promise<yauzl.Entry | null> {
  return new Promise((resolve, reject) => {
    const onEntry = (entry: yauzl.Entry): void => {
      cleanup();
      resolve(entry);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(null);
    };
    const onError = (error: unknown): void => {
      cleanup();
      reject(new InvalidSkillBundleError('not_a_zip', null, `the zip directory is damaged (${zipMessage(error)})`));
    };
    const cleanup = (): void => {
      zipfile.off('entry', onEntry);
      zipfile.off('end', onEnd);
      zipfile.off('error', onError);
    };
    zipfile.on('entry', onEntry);
    zipfile.on('end', onEnd);
    zipfile.on('error', onError);
    zipfile.readEntry();
  });
}

/** The library's message, without anything that could be a local path. */
function zipMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\/[^\s]*/g, '…').slice(0, 200);
}
