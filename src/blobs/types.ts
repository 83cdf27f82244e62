/**
 * BlobStore: content-addressed bytes, kept apart from records.
 *
 * Bytes are addressed by sha256, so identical uploads share one blob. A write is all-or-nothing: a crash leaves
 * at most a temporary part that the next start removes, never a half-written blob. Two implementations: a local
 * folder (src/backend/local/blob-store.ts, the default) and an S3-compatible bucket (src/backend/s3/blob-store.ts, `PRISM_BLOB_URL=s3://…`);
 * both pass test/contract/blob-store.conformance.ts.
 */
import type { Readable } from 'node:stream';
import type { StoredBytes } from '../domain/file';

/** Bytes written and synced to a temporary part, hashed, not yet visible under their hash. */
export interface StagedBlob {
  stored: StoredBytes;
  /** Moves the part into place atomically; idempotent for identical content. */
  commit(): Promise<void>;
  /** Removes the part; safe after commit (then it does nothing). */
  discard(): Promise<void>;
}

export interface BlobStore {
  /**
   * Streams `source` into a temporary part, hashing as it goes. The caller commits it once it holds the lock for
   * that hash, so a concurrent delete of the same content cannot remove bytes a new record is about to use.
   * @throws PayloadTooLargeError when more than `maxBytes` arrive; nothing is kept.
   */
  stage(source: Readable, options: { maxBytes: number }): Promise<StagedBlob>;
  /** A stream of the bytes, or null when no such blob exists. */
  open(sha256: string): Promise<Readable | null>;
  read(sha256: string): Promise<Buffer | null>;
  delete(sha256: string): Promise<void>;
  /**
   * Start-up cleanup: removes temporary parts left by dead writers and blobs no record refers to.
   * @returns how many of each were removed.
   */
  sweep(referenced: Set<string>): Promise<{ partsRemoved: number; orphansRemoved: number }>;
  /** Releases connections (S3's sockets); the local folder has none. */
  close(): Promise<void> | void;
}
