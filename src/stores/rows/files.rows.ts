/**
 * The files tables' rows as both SQL dialects answer them, and their mapping to domain records: written once,
 * imported by the SQLite and the PostgreSQL stores alike, so neither backend imports the other.
 */
import type { FilePurpose, FileRecord, FileStatus } from '../../domain/file';

export interface FileRow {
  id: string;
  org_id: string;
  filename: string;
  purpose: FilePurpose;
  status: FileStatus;
  bytes: number;
  content_type: string;
  md5: string | null;
  sha256: string | null;
  created_at: string;
  upload_expires_at: string | null;
}

export const toFile = (r: FileRow): FileRecord => ({
  id: r.id,
  orgId: r.org_id,
  filename: r.filename,
  purpose: r.purpose,
  status: r.status,
  bytes: r.bytes,
  contentType: r.content_type,
  md5: r.md5,
  sha256: r.sha256,
  createdAt: new Date(r.created_at),
  uploadExpiresAt: r.upload_expires_at ? new Date(r.upload_expires_at) : null,
});
