/**
 * Local file paths for `prism mcp`: the stdio server runs on the owner's machine as the owner, so its extraction
 * tools and `upload_file` take `path` (a file on this machine) beside url, file_id and base64 `data`, which would
 * carry a 50 MB scan as 67 MB of JSON through the pipe. Only the stdio server offers it: over HTTP a path would
 * name a file on the server, not the caller's.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BadRequestError, PayloadTooLargeError } from '../domain/errors';

export interface LocalFiles {
  /** The file's bytes and name. @throws BadRequestError (param `path`) or PayloadTooLargeError. */
  read(filePath: string): Promise<{ bytes: Buffer; filename: string }>;
}

export const PATH_DESCRIPTION = 'Absolute path of a local file (prism mcp only); instead of data';

export function localFiles(maxBytes: number): LocalFiles {
  return {
    async read(given) {
      const expanded = given.startsWith('~/') ? path.join(os.homedir(), given.slice(2)) : given;
      if (!path.isAbsolute(expanded)) {
        throw new BadRequestError(`path must be absolute (or start with ~/): '${given}'.`, 'missing_input', 'path');
      }
      let stat;
      try {
        stat = await fs.stat(expanded);
      } catch {
        throw new BadRequestError(`No readable file at '${given}'.`, 'missing_input', 'path');
      }
      if (!stat.isFile()) throw new BadRequestError(`'${given}' is not a file.`, 'missing_input', 'path');
      if (stat.size > maxBytes) throw new PayloadTooLargeError(maxBytes, `The file at '${given}'`);
      return { bytes: await fs.readFile(expanded), filename: path.basename(expanded) };
    },
  };
}
