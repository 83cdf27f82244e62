/**
 * Files API routes, mounted on `/v1/files` (main API) and `/v1/compat/files` + `/v1/openai/files` (gateway).
 *
 * The two surfaces share handlers. The gateway accepts anonymous callers (their files live in a per-IP guest
 * organisation), takes `purpose` from the form as the OpenAI SDK sends it, lists as an OpenAI page and writes
 * unix timestamps; the main API needs a key, lists as a plain array and writes ISO timestamps.
 */
import { Router, type Request, type Response } from 'express';
import type { Principal } from '../../domain/account';
import { PayloadTooLargeError } from '../../domain/errors';
import type { FileRecord } from '../../domain/file';
import type { FilesService } from '../../services/files.service';
import { contentHeaders } from '../file-content-headers';
import { receiveUpload } from '../multipart';
import { principalOf, userOf } from '../request-context';
import {
  fileIdParamsSchema,
  listFilesQuerySchema,
  md5ParamsSchema,
  presignedUrlBodySchema,
  publicUrlQuerySchema,
  toFileWire,
  uploadQuerySchema,
  type TimestampStyle,
} from '../../wire/files.schemas';
import { parseInput } from '../../wire/validation';

export interface FilesRoutesOptions {
  surface: 'main' | 'gateway';
  maxUploadBytes: number;
  /** Base URL for links, e.g. `https://prism.example.com`; derived from the request when unset. */
  publicUrl: string | undefined;
  /** Lifetime of a presigned upload link whose request names no `expiration` (`PRISM_URL_TTL_S`). */
  urlTtlSeconds: number;
}

export function filesRoutes(files: FilesService, options: FilesRoutesOptions): Router {
  const router = Router();
  const gateway = options.surface === 'gateway';
  const timestamps: TimestampStyle = gateway ? 'unix' : 'iso';
  const caller = (req: Request): Principal => (gateway ? principalOf(req) : userOf(req));
  const baseUrl = (req: Request): string => options.publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`;
  const send = (req: Request, res: Response, status: number, file: FileRecord, withUrl = true): void => {
    const url = withUrl && file.status === 'uploaded' ? `${baseUrl(req)}${files.publicPath(file)}` : null;
    res.status(status).json(toFileWire(file, url, timestamps));
  };

  router.post('/', async (req, res) => {
    const principal = caller(req);
    const upload = await receiveUpload(req, { maxBytes: options.maxUploadBytes, stage: (s) => files.stage(s) });
    let query;
    try {
      query = parseInput(uploadQuerySchema, { ...req.query, ...(gateway ? upload.fields : {}) }, 'query');
    } catch (error) {
      await upload.staged.discard();
      throw error;
    }
    const file = await files.create(principal, upload.staged, {
      filename: upload.filename,
      contentType: upload.mimeType,
      purpose: query.purpose,
    });
    send(req, res, 201, file, query.generate_public_url);
  });

  router.get('/', async (req, res) => {
    const page = parseInput(listFilesQuerySchema, req.query, 'query');
    const { items, hasMore } = await files.list(caller(req), page);
    const data = items.map((f) => toFileWire(f, `${baseUrl(req)}${files.publicPath(f)}`, timestamps));
    res.json(gateway ? { object: 'list', data, has_more: hasMore } : data);
  });

  router.post('/presigned-url', async (req, res) => {
    const principal = caller(req); // authenticate before validating
    const body = parseInput(presignedUrlBodySchema, req.body, 'body');
    const expiration = body.expiration ?? options.urlTtlSeconds;
    const presigned = await files.createPresignedUpload(
      principal,
      { filename: body.filename, purpose: body.purpose, contentType: body.content_type ?? 'application/octet-stream' },
      expiration,
    );
    const { file } = presigned;
    res.status(201).json({
      id: file.id,
      url: `${baseUrl(req)}${presigned.uploadPath}`,
      filename: file.filename,
      content_type: file.contentType,
      upload_method: 'PUT',
      method: 'PUT',
      public_url: null,
      created_at: toFileWire(file, null, timestamps).created_at,
      expiration,
      expires_at: presigned.expiresAt.toISOString(),
    });
  });

  router.get('/verify-upload/:file_id', async (req, res) => {
    const { file_id } = parseInput(fileIdParamsSchema, req.params, 'path');
    send(req, res, 200, await files.verifyUpload(caller(req), file_id));
  });

  router.get('/hash/:file_hash', async (req, res) => {
    const { file_hash } = parseInput(md5ParamsSchema, req.params, 'path');
    send(req, res, 200, await files.getByMd5(caller(req), file_hash));
  });

  router.put('/:file_id/upload', async (req, res) => {
    const { file_id } = parseInput(fileIdParamsSchema, req.params, 'path');
    // A declared length over the limit is refused before a byte is read or a part file opened.
    if (Number(req.get('content-length') ?? 0) > options.maxUploadBytes) {
      throw new PayloadTooLargeError(options.maxUploadBytes, 'Upload');
    }
    send(req, res, 200, await files.receivePresignedUpload(file_id, req.query, req));
  });

  router.get('/:file_id/content', async (req, res) => {
    const { file_id } = parseInput(fileIdParamsSchema, req.params, 'path');
    const signed = req.query.signature !== undefined;
    const { file, stream } = signed
      ? await files.openSignedContent(file_id, req.query)
      : await files.openContent(caller(req), file_id);
    for (const [name, value] of Object.entries(contentHeaders(file))) res.setHeader(name, value);
    stream.on('error', () => res.destroy());
    stream.pipe(res);
  });

  router.get('/:file_id', async (req, res) => {
    const { file_id } = parseInput(fileIdParamsSchema, req.params, 'path');
    const query = parseInput(publicUrlQuerySchema, req.query, 'query');
    send(req, res, 200, await files.get(caller(req), file_id), query.generate_public_url);
  });

  router.delete('/:file_id', async (req, res) => {
    const { file_id } = parseInput(fileIdParamsSchema, req.params, 'path');
    const file = await files.delete(caller(req), file_id);
    res.json({ ...toFileWire(file, null, timestamps), deleted: true });
  });

  return router;
}
