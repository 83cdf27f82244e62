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
import { AppError, PayloadTooLargeError } from '../domain/errors';
import { bodyReadError } from './middleware/error-handler';
import { fieldError } from '../wire/validation';

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

/** 400 for a body that is not well-formed multipart (bad boundary, bad part header, cut short). */
export function malformedMultipart(): AppError {
  return new AppError(400, {
    message: 'The multipart body is malformed or incomplete',
    type: 'invalid_request_error',
    code: 'malformed_multipart',
  });
}

/**
 * Reads a multipart body whose file part is `fieldName` (default `file`).
 *
 * Every stream involved has an error listener from the moment it exists (an `error` event with no listener is an
 * uncaught exception), and whatever ends the upload early — a body cut short, a client that hangs up, a bad part —
 * destroys the file stream, so the staged part file is removed at once rather than at the next start-up sweep.
 * Filenames are read as UTF-8 (busboy's default for parameters is Latin-1).
 * @throws PayloadTooLargeError over the limit; 400 `malformed_multipart`; a 422 `missing` issue without a file part.
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
    let fileStream: Readable | undefined;
    let file: { filename: string; mimeType: string } | undefined;
    let settled = false;
    /** Why the body stream failed, when it did: a staging that then fails reports this, not its own symptom. */
    let streamFailure: AppError | undefined;
    const stagingFailed = (error: unknown): void => fail(error instanceof AppError ? error : (streamFailure ?? error));

    const fail = (error: unknown): void => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      req.resume();
      // Ends a staging still reading: it removes its part file and closes its descriptor.
      if (fileStream && !fileStream.destroyed) fileStream.destroy(new Error('upload ended early'));
      void upload?.then((staged) => staged.discard()).catch(() => undefined);
      reject(error instanceof Error ? error : new Error(String(error)));
    };

    /**
     * A stream or parser error while a staging runs: end the staging, then report what it failed with when that
     * says more (over the size limit, the file stream is torn down and the parser complains as a consequence).
     */
    const failAfterUpload = (error: AppError): void => {
      streamFailure ??= error;
      if (!upload || settled) {
        fail(error);
        return;
      }
      if (fileStream && !fileStream.destroyed) fileStream.destroy(new Error('upload ended early'));
      upload.then(
        () => fail(error),
        (stageError: unknown) => stagingFailed(stageError),
      );
    };

    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        defParamCharset: 'utf8',
        limits: { files: 1, fields: 50, fieldSize: 64 * 1024, parts: 64 },
      });
    } catch {
      req.resume();
      reject(malformedMultipart());
      return;
    }

    parser.on('file', (name, stream, info) => {
      stream.on('error', () => failAfterUpload(malformedMultipart()));
      if (name !== fieldName || upload || settled) {
        stream.resume();
        return;
      }
      fileStream = stream;
      file = { filename: info.filename || 'upload', mimeType: info.mimeType || 'application/octet-stream' };
      upload = options.stage(stream);
      upload.catch(stagingFailed);
    });
    parser.on('field', (name, value) => {
      fields[name] = value;
    });
    parser.on('error', () => failAfterUpload(malformedMultipart()));
    parser.on('close', () => {
      if (settled) return;
      if (!upload || !file) {
        fail(missingFile());
        return;
      }
      const meta = file;
      upload.then((staged) => {
        if (settled) {
          void staged.discard().catch(() => undefined);
          return;
        }
        settled = true;
        resolve({ ...meta, staged, fields });
      }, stagingFailed);
    });
    const aborted = (): void => failAfterUpload(bodyReadError('request.aborted', options.maxBytes));
    req.on('aborted', aborted);
    req.on('error', aborted);
    req.pipe(parser);
  });
}
