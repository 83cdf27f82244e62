/**
 * Stored files: the record the Files API returns and the purposes it accepts.
 */

export const FILE_PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'datasets'] as const;
export type FilePurpose = (typeof FILE_PURPOSES)[number];

/** `pending` records exist between a presigned-URL request and the PUT of the bytes; only `uploaded` ones list. */
export type FileStatus = 'pending' | 'uploaded';

export interface FileRecord {
  id: string;
  orgId: string;
  filename: string;
  purpose: FilePurpose;
  status: FileStatus;
  /** Size in bytes; 0 while pending. */
  bytes: number;
  contentType: string;
  md5: string | null;
  sha256: string | null;
  createdAt: Date;
  /** For pending records: when the presigned upload URL stops working. */
  uploadExpiresAt: Date | null;
}

/** What the blob store reports of bytes it kept: their size and the hashes records and dedupe use. */
export interface StoredBytes {
  bytes: number;
  md5: string;
  sha256: string;
}
