/**
 * Packs a skill folder into a zip the same way every time (sorted names, fixed timestamps and modes), so the same
 * content always gives the same bytes, the same sha256 and therefore the same `skill_version`. Used by
 * `prism skills pack|push` and by the seeding of built-in skills.
 *
 * Hidden files and folders (`.git`, `.DS_Store`) are left out; a symbolic link is refused, as the server would.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { ZipFile } from 'yazl';
import { InvalidSkillBundleError } from '../../domain/errors';

/** Zip timestamps are DOS dates (1980 or later): a fixed one keeps packing reproducible. */
const FIXED_MTIME = new Date(Date.UTC(2020, 0, 1));

export interface PackedFile {
  path: string;
  data: Buffer;
}

/** Reads a skill folder's files in name order. */
export async function readSkillFolder(dir: string): Promise<PackedFile[]> {
  const files: PackedFile[] = [];
  async function walk(relative: string): Promise<void> {
    const entries = await fs.readdir(path.join(dir, relative), { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const entryPath = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isSymbolicLink()) {
        throw new InvalidSkillBundleError('symlink', entryPath, 'symbolic links are not allowed in a skill');
      }
      if (entry.isDirectory()) await walk(entryPath);
      else if (entry.isFile()) files.push({ path: entryPath, data: await fs.readFile(path.join(dir, entryPath)) });
    }
  }
  await walk('');
  return files;
}

/** Zips files (deflate) with fixed timestamps and modes, in the order given. */
export function zipFiles(files: PackedFile[]): Promise<Buffer> {
  const zip = new ZipFile();
  for (const file of files) {
    zip.addBuffer(file.data, file.path, { mtime: FIXED_MTIME, mode: 0o100644, compress: true });
  }
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (chunk: Buffer) => chunks.push(chunk));
    zip.outputStream.on('error', reject);
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

/** Packs a skill folder into zip bytes (not yet checked: run them through the bundle reader). */
export async function packSkillFolder(dir: string): Promise<Buffer> {
  return zipFiles(await readSkillFolder(dir));
}
