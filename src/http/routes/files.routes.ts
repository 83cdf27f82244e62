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
import { FILE_EXAMPLE } from '../api/examples';
import { declare, route } from '../api/route-declaration';
import {
  deletedFileSchema,
  fileListSchema,
  filePageSchema,
  fileSchema,
  presignedUploadSchema,
} from '../api/response-schemas';

export interface FilesRoutesOptions {
  surface: 'main' | 'gateway';
  maxUploadBytes: number;
  /** Base URL for links, e.g. `https://prism.example.com`; derived from the request when unset. */
  publicUrl: string | undefined;
  /** Lifetime of a presigned upload link whose request names no `expiration` (`PRISM_URL_TTL_S`). */
  urlTtlSeconds: number;
}

/** The files routes' declarations; the gateway's differ in list shape and timestamps. */
function filesDeclarations(surface: 'main' | 'gateway') {
  const tag = surface === 'gateway' ? 'Gateway' : 'Files';
  const auth = surface === 'gateway' ? 'open' : 'key';
  // The example is the main API's answer (the gateway writes `created_at` in unix seconds).
  const example = surface === 'main' ? { example: FILE_EXAMPLE } : {};
  const gatewayOnly = 'served on the gateway for parity; VLM Run clients call it on /v1/files';
  return {
    upload: declare({
      method: 'post',
      path: '/',
      tag,
      summary: 'Upload a file (multipart, field `file`)',
      auth,
      query: uploadQuerySchema,
      rawBody: { kind: 'multipart', fields: surface === 'gateway' ? { purpose: 'What the file is for' } : {} },
      responses: { 201: { description: 'The file', schema: fileSchema, ...example } },
      errors: [400, 413, 429],
    }),
    list: declare({
      method: 'get',
      path: '/',
      tag,
      summary: 'List files',
      auth,
      query: listFilesQuerySchema,
      responses: {
        200:
          surface === 'gateway'
            ? { description: 'A page of files (OpenAI list)', schema: filePageSchema }
            : { description: 'Files, newest first', schema: fileListSchema },
      },
    }),
    presign: declare({
      method: 'post',
      path: '/presigned-url',
      tag,
      summary: 'Get a signed URL to PUT a file to',
      auth,
      body: presignedUrlBodySchema,
      responses: { 201: { description: 'Where to PUT the bytes', schema: presignedUploadSchema } },
    }),
    verify: declare({
      method: 'get',
      path: '/verify-upload/:file_id',
      tag,
      summary: 'Check a presigned upload arrived',
      auth,
      params: fileIdParamsSchema,
      responses: { 200: { description: 'The file', schema: fileSchema } },
      errors: [404, 409],
      ...(surface === 'gateway' ? { unlisted: gatewayOnly } : {}),
    }),
    byHash: declare({
      method: 'get',
      path: '/hash/:file_hash',
      tag,
      summary: 'Find a file by the MD5 of its bytes (404 when there is none)',
      auth,
      params: md5ParamsSchema,
      responses: { 200: { description: 'The file', schema: fileSchema } },
      errors: [404],
      ...(surface === 'gateway' ? { unlisted: gatewayOnly } : {}),
    }),
    receive: declare({
      method: 'put',
      path: '/:file_id/upload',
      tag,
      summary: 'The presigned upload target (the signed `url` a presign answers; no key)',
      auth: 'open',
      params: fileIdParamsSchema,
      rawBody: { kind: 'binary' },
      responses: { 200: { description: 'The file', schema: fileSchema } },
      errors: [404, 409, 413],
      unlisted: 'a signed link the server hands out (`url` of a presign), used as given',
    }),
    content: declare({
      method: 'get',
      path: '/:file_id/content',
      tag,
      summary: "A file's bytes",
      auth: 'open',
      params: fileIdParamsSchema,
      responses: { 200: { description: 'The bytes', contentType: 'application/octet-stream' } },
      errors: [404],
      ...(surface === 'main'
        ? {
            unlisted:
              'a signed link the server hands out (`public_url`), used as given (it answers a key too); listing it ' +
              'beside verify-upload/{file_id} and hash/{file_hash} would make the paths ambiguous',
          }
        : {}),
    }),
    get: declare({
      method: 'get',
      path: '/:file_id',
      tag,
      summary: 'Get a file record',
      auth,
      params: fileIdParamsSchema,
      query: publicUrlQuerySchema,
      responses: { 200: { description: 'The file', schema: fileSchema, ...example } },
      errors: [404],
    }),
    delete: declare({
      method: 'delete',
      path: '/:file_id',
      tag,
      summary: 'Delete a file (pro and enterprise)',
      auth,
      params: fileIdParamsSchema,
      responses: { 200: { description: 'The deleted file', schema: deletedFileSchema } },
      errors: [403, 404],
    }),
  };
}

/** Made once per surface: every app built in a process mounts the same declaration objects. */
export const FILES_ROUTES = { main: filesDeclarations('main'), gateway: filesDeclarations('gateway') };

export function filesRoutes(files: FilesService, options: FilesRoutesOptions): Router {
  const router = Router();
  const declared = FILES_ROUTES[options.surface];
  const gateway = options.surface === 'gateway';
  const timestamps: TimestampStyle = gateway ? 'unix' : 'iso';
  const caller = (req: Request): Principal => (gateway ? principalOf(req) : userOf(req));
  const baseUrl = (req: Request): string => options.publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`;
  const send = (req: Request, res: Response, status: number, file: FileRecord, withUrl = true): void => {
    const url = withUrl && file.status === 'uploaded' ? `${baseUrl(req)}${files.publicPath(file)}` : null;
    res.status(status).json(toFileWire(file, url, timestamps));
  };

  route(router, declared.upload, async (req, res, input) => {
    const principal = caller(req);
    const upload = await receiveUpload(req, { maxBytes: options.maxUploadBytes, stage: (s) => files.stage(s) });
    let query;
    try {
      query = input.query(gateway ? upload.fields : {});
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

  route(router, declared.list, async (req, res, input) => {
    const page = input.query();
    const { items, hasMore } = await files.list(caller(req), page);
    const data = items.map((f) => toFileWire(f, `${baseUrl(req)}${files.publicPath(f)}`, timestamps));
    res.json(gateway ? { object: 'list', data, has_more: hasMore } : data);
  });

  route(router, declared.presign, async (req, res, input) => {
    const principal = caller(req); // authenticate before validating
    const body = input.body();
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

  route(router, declared.verify, async (req, res, input) => {
    const { file_id } = input.params();
    send(req, res, 200, await files.verifyUpload(caller(req), file_id));
  });

  route(router, declared.byHash, async (req, res, input) => {
    const { file_hash } = input.params();
    send(req, res, 200, await files.getByMd5(caller(req), file_hash));
  });

  route(router, declared.receive, async (req, res, input) => {
    const { file_id } = input.params();
    // A declared length over the limit is refused before a byte is read or a part file opened.
    if (Number(req.get('content-length') ?? 0) > options.maxUploadBytes) {
      throw new PayloadTooLargeError(options.maxUploadBytes, 'Upload');
    }
    send(req, res, 200, await files.receivePresignedUpload(file_id, req.query, req));
  });

  route(router, declared.content, async (req, res, input) => {
    const { file_id } = input.params();
    const signed = req.query.signature !== undefined;
    const { file, stream } = signed
      ? await files.openSignedContent(file_id, req.query)
      : await files.openContent(caller(req), file_id);
    for (const [name, value] of Object.entries(contentHeaders(file))) res.setHeader(name, value);
    stream.on('error', () => res.destroy());
    stream.pipe(res);
  });

  route(router, declared.get, async (req, res, input) => {
    const { file_id } = input.params();
    const query = input.query();
    send(req, res, 200, await files.get(caller(req), file_id), query.generate_public_url);
  });

  route(router, declared.delete, async (req, res, input) => {
    const { file_id } = input.params();
    const file = await files.delete(caller(req), file_id);
    res.json({ ...toFileWire(file, null, timestamps), deleted: true });
  });

  return router;
}
