/**
 * What the files service may ask of persistence about uploaded files and the blobs they reference.
 */
import type { FilePurpose, FileRecord, StoredBytes } from '../../domain/file';

export interface NewFile {
  orgId: string;
  filename: string;
  purpose: FilePurpose;
  contentType: string;
}

export interface FilePage {
  skip: number;
  limit: number;
  after?: string | undefined;
}

export interface FileStore {
  /** Inserts an uploaded file and its blob reference in one transaction. */
  insertUploaded(file: NewFile, content: StoredBytes): Promise<FileRecord>;
  /** Inserts a pending record for the presigned-URL flow. */
  insertPending(file: NewFile, uploadExpiresAt: Date): Promise<FileRecord>;
  /** Completes a pending record; returns null when it is missing or no longer pending. */
  completePending(orgId: string, fileId: string, content: StoredBytes): Promise<FileRecord | null>;
  get(orgId: string, fileId: string): Promise<FileRecord | null>;
  /** A record by id whatever its organisation: only for signed URLs, whose signature is the credential. */
  getBySignedId(fileId: string): Promise<FileRecord | null>;
  /** Newest first; `after` (a file id) continues after that file, as OpenAI-style cursors do. */
  list(orgId: string, page: FilePage): Promise<FileRecord[]>;
  findByMd5(orgId: string, md5: string): Promise<FileRecord | null>;
  /**
   * Deletes the record; returns it and whether its blob has no other reference left (the caller removes the bytes
   * after the transaction commits).
   */
  delete(orgId: string, fileId: string): Promise<{ file: FileRecord; blobUnreferenced: boolean } | null>;
  /** Removes pending records whose upload URL expired before `now`; returns how many. */
  deleteExpiredPending(now: Date): Promise<number>;
  /** Every blob hash a record refers to (for the start-up sweep of orphan blobs). */
  referencedBlobs(): Promise<Set<string>>;
}
