/**
 * Streaming multipart/form-data uploads: one part named `file` goes straight to a staged blob, other parts are
 * small text fields. Nothing is buffered in memory, and a failed or oversized upload leaves nothing behind.
 *
 * Fields may arrive after the file (the OpenAI SDK sends `purpose` last), so the caller validates them once the
 * whole body has been read, and commits or discards the staged bytes then.
 */
import busboy from 'busboy';
import type { Request } from 'express';
import type { Readable } from 'node:stream';
import type { StagedBlob } from '../blobs/types';
import { PayloadTooLargeError } from '../domain/errors';
import { fieldError } from './validation';

/** Room for part headers and text fields on top of the file-size limit. */
const MULTIPART_OVERHEAD_BYTES = 1024 * 1024;

export interface ReceivedUpload {
  filename: string;
  mimeType: string;
  staged: StagedBlob;
  fields: Record<string, string>;
}

export interface ReceiveOptions {
  maxBytes: number;
  stage: (source: Readable) => Promise<StagedBlob>;
  fieldName?: string;
}

/**
 * Reads a multipart body whose file part is `fieldName` (default `file`).
 * @throws PayloadTooLargeError over the limit; a 422 `missing` issue when there is no file part.
 */
export function receiveUpload(req: Request, options: ReceiveOptions): Promise<ReceivedUpload> {
  const fieldName = options.fieldName ?? 'file';
  const missingFile = () => fieldError('body', fieldName, 'missing', 'Field required', null);
  if (!req.is('multipart/form-data')) return Promise.reject(missingFile());
  const declared = Number(req.get('content-length') ?? NaN);
  if (declared > options.maxBytes + MULTIPART_OVERHEAD_BYTES) {
    return Promise.reject(new PayloadTooLargeError(options.maxBytes, 'Upload'));
  }

  return new Promise<ReceivedUpload>((resolve, reject) => {
    const fields: Record<string, string> = {};
    let upload: Promise<StagedBlob> | undefined;
    let file: { filename: string; mimeType: string } | undefined;
    let settled = false;

    const fail = (error: unknown): void => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      req.resume();
      void upload?.then((staged) => staged.discard()).catch(() => undefined);
      reject(error instanceof Error ? error : new Error(String(error)));
    };

    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        limits: { files: 1, fields: 50, fieldSize: 64 * 1024, parts: 64 },
      });
    } catch {
      reject(missingFile());
      return;
    }

    parser.on('file', (name, stream, info) => {
      if (name !== fieldName || upload) {
        stream.resume();
        return;
      }
      file = { filename: info.filename || 'upload', mimeType: info.mimeType || 'application/octet-stream' };
      upload = options.stage(stream);
      upload.catch(fail);
    });
    parser.on('field', (name, value) => {
      fields[name] = value;
    });
    parser.on('error', fail);
    parser.on('close', () => {
      if (settled) return;
      if (!upload || !file) {
        fail(missingFile());
        return;
      }
      const meta = file;
      upload.then((staged) => {
        settled = true;
        resolve({ ...meta, staged, fields });
      }, fail);
    });
    req.on('aborted', () => fail(new Error('client aborted the upload')));
    req.pipe(parser);
  });
}
