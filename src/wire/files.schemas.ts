/**
 * Wire shapes of the Files API: request schemas and the one mapper from a FileRecord to its JSON.
 */
import { z } from 'zod';
import { FILE_PURPOSES, type FileRecord } from '../domain/file';
import { pagination, queryBool } from './common.schemas';

/** Bounds of a presigned upload's `expiration`; when absent, `PRISM_URL_TTL_S` applies (as for public links). */
export const PRESIGNED_EXPIRATION = { min: 60, max: 7 * 24 * 3600 } as const;

export const uploadQuerySchema = z.object({
  purpose: z.enum(FILE_PURPOSES).default('assistants'),
  generate_public_url: queryBool(true),
});

export const publicUrlQuerySchema = z.object({ generate_public_url: queryBool(true) });

export const listFilesQuerySchema = pagination({ max: 1000, default: 10 }).extend({
  /** OpenAI-style cursor: the id of the last file of the previous page. */
  after: z.string().min(1).max(200).optional(),
});

export const fileIdParamsSchema = z.object({ file_id: z.string().min(1).max(200) });

export const md5ParamsSchema = z.object({ file_hash: z.string().regex(/^[0-9a-fA-F]{32}$/) });

export const presignedUrlBodySchema = z.object({
  filename: z.string().min(1).max(1024),
  purpose: z.enum(FILE_PURPOSES).default('assistants'),
  expiration: z.number().int().min(PRESIGNED_EXPIRATION.min).max(PRESIGNED_EXPIRATION.max).optional(),
  content_type: z.string().min(1).max(255).optional(),
});

/** How timestamps are written: ISO-8601 on the main API, unix seconds on the OpenAI-compatible surface. */
export type TimestampStyle = 'iso' | 'unix';

export interface FileWire {
  id: string;
  object: 'file';
  filename: string;
  bytes: number;
  purpose: string;
  created_at: string | number;
  status: 'processed' | 'pending';
  md5: string | null;
  content_type: string;
  public_url: string | null;
}

export function toFileWire(file: FileRecord, publicUrl: string | null, timestamps: TimestampStyle): FileWire {
  return {
    id: file.id,
    object: 'file',
    filename: file.filename,
    bytes: file.bytes,
    purpose: file.purpose,
    created_at: timestamps === 'unix' ? Math.floor(file.createdAt.getTime() / 1000) : file.createdAt.toISOString(),
    status: file.status === 'uploaded' ? 'processed' : 'pending',
    md5: file.md5,
    content_type: file.contentType,
    public_url: publicUrl,
  };
}
