/**
 * File tools: store bytes given as base64 or fetched from a URL, read a record back, list the caller's files.
 * The records are the main API's (`/v1/files`), with a signed public URL, so another tool or a human can use them.
 */
import { Readable } from 'node:stream';
import { z } from 'zod';
import { FILE_PURPOSES, type FileRecord } from '../../domain/file';
import { toFileWire } from '../../wire/files.schemas';
import type { FilesService } from '../../services/files.service';
import { resolveSingleInput, type InputResolverDeps } from '../../services/inputs/resolve-input';
import { sniffMediaType } from '../../lib/media-type';
import { withToolParams } from '../mcp-errors';
import { PATH_DESCRIPTION, type LocalFiles } from '../mcp-local-files';
import { defineMcpTool, type McpTool } from '../mcp-tool';
import { SOURCE_PARAMS } from './extract.mcp-tools';
import { fileOutput } from './mcp-schemas';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export interface FileToolsDeps {
  files: FilesService;
  /** How base64 and URLs become bytes: the same resolver (and URL safety rules) as the generate endpoints. */
  inputs: InputResolverDeps;
  /** prism mcp only: `upload_file` also takes `path`, a file on this machine. */
  local?: LocalFiles | undefined;
}

export function fileTools({ files, inputs, local }: FileToolsDeps): McpTool[] {
  const wire = (file: FileRecord, baseUrl: string) => toFileWire(file, `${baseUrl}${files.publicPath(file)}`, 'iso');

  return [
    defineMcpTool({
      name: 'upload_file',
      title: 'Upload a file',
      description:
        'Stores a file from base64 data or an http(s) URL and returns its record; its id (a UUID) is the file_id ' +
        'of the extract tools.',
      input: z
        .object({
          data: z.string().min(1).optional().describe('Base64 bytes or a data: URL'),
          url: z.string().min(1).optional().describe('http(s) URL to fetch'),
          ...(local ? { path: z.string().min(1).optional().describe(PATH_DESCRIPTION) } : {}),
          filename: z.string().min(1).max(1024).optional(),
          content_type: z.string().min(1).max(255).optional().describe('Default: sniffed from the bytes'),
          purpose: z.enum(FILE_PURPOSES).default('assistants'),
        })
        .refine((a) => [a.data, a.url, (a as { path?: string }).path].filter((v) => v !== undefined).length === 1, {
          message: local ? 'Give exactly one of data, url or path' : 'Give exactly one of data or url',
        }),
      output: fileOutput,
      // Creates a record (a repeat creates another record of the same bytes); a URL reaches outside Prism.
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      needsAccount: true,
      async run(args, ctx) {
        const path = (args as { path?: string }).path;
        const fromPath = path !== undefined && local ? await local.read(path) : null;
        const source = args.url !== undefined ? { url: args.url } : { images: [args.data ?? ''] };
        const input = fromPath
          ? { ...sniffed(fromPath.bytes), filename: fromPath.filename }
          : await withToolParams(SOURCE_PARAMS, () => resolveSingleInput(inputs, ctx.principal, source));
        const staged = await files.stage(Readable.from([input.bytes]));
        const file = await files.create(ctx.principal, staged, {
          filename: args.filename ?? input.filename ?? 'upload',
          contentType: args.content_type ?? input.mimeType,
          purpose: args.purpose,
        });
        return wire(file, ctx.baseUrl);
      },
    }),
    defineMcpTool({
      name: 'get_file',
      title: 'Get a file record',
      description: 'A stored file’s record.',
      input: z.object({ file_id: z.string().min(1).max(200).describe('File id (a UUID)') }),
      output: fileOutput,
      annotations: READ_ONLY,
      needsAccount: true,
      run: async (args, ctx) => wire(await files.get(ctx.principal, args.file_id), ctx.baseUrl),
    }),
    defineMcpTool({
      name: 'list_files',
      title: 'List files',
      description: 'Your stored files, newest first.',
      input: z.object({
        skip: z.number().int().min(0).default(0),
        limit: z.number().int().min(1).max(1000).default(10),
      }),
      output: z.object({ items: z.array(fileOutput), next_offset: z.number().int().nullable() }),
      annotations: READ_ONLY,
      needsAccount: true,
      async run(args, ctx) {
        const { items, hasMore } = await files.list(ctx.principal, { skip: args.skip, limit: args.limit });
        return {
          items: items.map((f) => wire(f, ctx.baseUrl)),
          next_offset: hasMore ? args.skip + items.length : null,
        };
      },
    }),
  ];
}

/** Bytes read from a local path, typed by their content as the resolver types the other sources. */
function sniffed(bytes: Buffer): { bytes: Buffer; mimeType: string } {
  return { bytes, mimeType: sniffMediaType(bytes).mimeType };
}
