/**
 * Reads the multipart form of an audio transcription (`file` plus small text fields) into memory.
 *
 * Transcription files are capped small (`PRISM_MAX_TRANSCRIPTION_BYTES`, 25 MiB by default, as OpenAI's), go to the
 * upstream whole and are never stored, so they skip the blob store the Files API stages into. Unlike the Files
 * upload, a field sent more than once (`timestamp_granularities[]`) keeps every value. An oversized file is a 413
 * as soon as the limit is passed; the rest of the body is drained and dropped.
 */
import busboy from 'busboy';
import type { Request } from 'express';
import { PayloadTooLargeError } from '../domain/errors';
import { fieldError } from '../wire/validation';
import { bodyReadError } from './middleware/error-handler';
import { malformedMultipart } from './multipart';

/** Room for part headers and text fields on top of the file-size limit. */
const FORM_OVERHEAD_BYTES = 256 * 1024;

export interface ReceivedAudioForm {
  file: { filename: string; mimeType: string; bytes: Buffer };
  fields: Record<string, string | string[]>;
}

/**
 * @throws PayloadTooLargeError over `maxBytes`; 400 `malformed_multipart`; a 422 `missing` issue for no `file`.
 */
export function receiveAudioForm(req: Request, maxBytes: number): Promise<ReceivedAudioForm> {
  const missingFile = () => fieldError('body', 'file', 'missing', 'Field required', null);
  if (!req.is('multipart/form-data')) return Promise.reject(missingFile());
  if (Number(req.get('content-length') ?? NaN) > maxBytes + FORM_OVERHEAD_BYTES) {
    return Promise.reject(new PayloadTooLargeError(maxBytes, 'Audio file'));
  }
  return new Promise<ReceivedAudioForm>((resolve, reject) => {
    const fields: Record<string, string | string[]> = {};
    let file: { filename: string; mimeType: string; chunks: Buffer[]; done: Promise<void> } | undefined;
    let settled = false;
    const fail = (error: Error): void => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      req.resume();
      reject(error);
    };
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        defParamCharset: 'utf8',
        limits: { files: 1, fields: 50, fieldSize: 64 * 1024, parts: 64, fileSize: maxBytes },
      });
    } catch {
      req.resume();
      reject(malformedMultipart());
      return;
    }
    parser.on('file', (name, stream, info) => {
      stream.on('error', () => fail(malformedMultipart()));
      if (name !== 'file' || file) {
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      const done = new Promise<void>((done) => stream.on('end', done));
      file = {
        filename: info.filename || 'audio',
        mimeType: info.mimeType || 'application/octet-stream',
        chunks,
        done,
      };
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => fail(new PayloadTooLargeError(maxBytes, 'Audio file')));
    });
    parser.on('field', (name, value) => {
      const before = fields[name];
      fields[name] = before === undefined ? value : [...(Array.isArray(before) ? before : [before]), value];
    });
    parser.on('error', () => fail(malformedMultipart()));
    parser.on('close', () => {
      if (settled) return;
      const received = file;
      if (!received) {
        fail(missingFile());
        return;
      }
      void received.done.then(() => {
        if (settled) return;
        settled = true;
        const bytes = Buffer.concat(received.chunks);
        resolve({ file: { filename: received.filename, mimeType: received.mimeType, bytes }, fields });
      });
    });
    req.on('aborted', () => fail(bodyReadError('request.aborted', maxBytes)));
    req.pipe(parser);
  });
}
