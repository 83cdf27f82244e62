/**
 * Files: upload, list, read, delete and the presigned-URL flow, scoped by organisation.
 *
 * Bytes go to the blob store first and the record second, under a per-hash lock that also orders deletes of the
 * same content, so no record ever points at missing bytes. Links to content are signed and expire; the signature
 * is the only credential a link carries.
 */
import path from 'node:path';
import type { GuestUploadQuota } from './guest-upload-quota';
import type { Readable } from 'node:stream';
import { tierMayDeleteFiles, type Principal } from '../domain/account';
import { ConflictError, NotFoundError, PermissionDeniedError } from '../domain/errors';
import type { FilePurpose, FileRecord } from '../domain/file';
import type { BlobStore, StagedBlob } from '../blobs/types';
import type { KeyedMutex } from '../lib/keyed-mutex';
import type { UrlSigner } from '../lib/url-signer';
import type { FilePage, FileStore } from '../stores/types';

export interface FilesServiceDeps {
  files: FileStore;
  blobs: BlobStore;
  locks: KeyedMutex;
  signer: UrlSigner;
  orgIdFor: (principal: Principal) => Promise<string>;
  limits: { maxUploadBytes: number; urlTtlSeconds: number };
  /** Per-address daily quota for anonymous (guest) uploads; none when absent. */
  guestQuota?: GuestUploadQuota;
  /** How long a guest's file lives (PRISM_GUEST_FILE_TTL_H), ms; 0 or absent: forever. */
  guestFileTtlMs?: number;
  now?: () => Date;
}

export interface UploadMeta {
  filename: string;
  contentType: string;
  purpose: FilePurpose;
}

export interface PresignedUpload {
  file: FileRecord;
  /** Path and query of the signed PUT URL. */
  uploadPath: string;
  expiresAt: Date;
}

/** A signed link check as it arrives on a URL. */
export interface SignedRequest {
  expires?: unknown;
  signature?: unknown;
}

export interface FilesService {
  /** Streams an upload into a staged blob; the caller then commits it with {@link FilesService.create}. */
  stage(source: Readable): Promise<StagedBlob>;
  /** Stores the staged bytes as a new file of the caller's organisation; discards them on failure. */
  create(principal: Principal, staged: StagedBlob, meta: UploadMeta): Promise<FileRecord>;
  /** A page of the organisation's files, newest first, and whether more follow. */
  list(principal: Principal, page: FilePage): Promise<{ items: FileRecord[]; hasMore: boolean }>;
  /** @throws NotFoundError also for other organisations' files. */
  get(principal: Principal, fileId: string): Promise<FileRecord>;
  /** @throws NotFoundError when the organisation has no file with that md5. */
  getByMd5(principal: Principal, md5: string): Promise<FileRecord>;
  /** @throws PermissionDeniedError below the Pro tier; NotFoundError for unknown ids. */
  delete(principal: Principal, fileId: string): Promise<FileRecord>;
  createPresignedUpload(principal: Principal, meta: UploadMeta, expiresInSeconds: number): Promise<PresignedUpload>;
  /** Receives the bytes PUT to a presigned URL. @throws NotFoundError for a bad signature or expired link. */
  receivePresignedUpload(fileId: string, signed: SignedRequest, source: Readable): Promise<FileRecord>;
  /** @throws ConflictError while the bytes have not arrived yet. */
  verifyUpload(principal: Principal, fileId: string): Promise<FileRecord>;
  /** Content through a signed public link. */
  openSignedContent(fileId: string, signed: SignedRequest): Promise<{ file: FileRecord; stream: Readable }>;
  /** Content for an authenticated caller. */
  openContent(principal: Principal, fileId: string): Promise<{ file: FileRecord; stream: Readable }>;
  /** Path and query of a signed, expiring public link to the file's bytes. */
  publicPath(file: FileRecord): string;
  /**
   * Deletes guests' files older than the guest file lifetime (records and, when nothing else refers to them, their
   * bytes); returns how many. A no-op when guest files live forever.
   * @param at the clock to judge age by (default now).
   */
  sweepGuestFiles(at?: Date): Promise<number>;
}

export const contentPath = (fileId: string): string => `/v1/files/${encodeURIComponent(fileId)}/content`;
export const uploadPath = (fileId: string): string => `/v1/files/${encodeURIComponent(fileId)}/upload`;

export function createFilesService(deps: FilesServiceDeps): FilesService {
  const { files, blobs, locks, signer } = deps;
  const now = deps.now ?? (() => new Date());
  const nowSeconds = (): number => Math.floor(now().getTime() / 1000);

  const guestTtlMs = deps.guestFileTtlMs ?? 0;
  /** A guest's file past its lifetime is gone for its owner even before the sweep removes it. */
  const expiredForGuest = (principal: Principal, file: FileRecord): boolean =>
    principal.kind === 'anonymous' && guestTtlMs > 0 && now().getTime() - file.createdAt.getTime() > guestTtlMs;

  async function uploaded(principal: Principal, fileId: string): Promise<FileRecord> {
    const file = await files.get(await deps.orgIdFor(principal), fileId);
    if (!file || file.status !== 'uploaded' || expiredForGuest(principal, file)) {
      throw new NotFoundError('file', fileId);
    }
    return file;
  }

  /** Deletes one record and, when nothing else refers to them, its bytes, under the blob's lock. */
  async function remove(file: FileRecord): Promise<FileRecord | null> {
    const sha256 = file.sha256 ?? '';
    return locks.run(sha256, async () => {
      const deleted = await files.delete(file.orgId, file.id);
      if (!deleted) return null;
      if (deleted.blobUnreferenced && sha256) await blobs.delete(sha256);
      return deleted.file;
    });
  }

  async function commitUnderLock<T>(staged: StagedBlob, write: () => Promise<T>): Promise<T> {
    try {
      return await locks.run(staged.stored.sha256, async () => {
        await staged.commit();
        return write();
      });
    } finally {
      await staged.discard();
    }
  }

  async function openBytes(file: FileRecord): Promise<{ file: FileRecord; stream: Readable }> {
    const stream = file.sha256 ? await blobs.open(file.sha256) : null;
    if (!stream) throw new NotFoundError('file', file.id);
    return { file, stream };
  }

  return {
    stage: (source) => blobs.stage(source, { maxBytes: deps.limits.maxUploadBytes }),

    async create(principal, staged, meta) {
      const orgId = await (async () => {
        if (principal.kind === 'anonymous') deps.guestQuota?.take(principal.clientIp, staged.stored.bytes);
        return deps.orgIdFor(principal);
      })().catch(async (error: unknown) => {
        await staged.discard();
        throw error;
      });
      return commitUnderLock(staged, () =>
        files.insertUploaded({ orgId, ...meta, filename: cleanFilename(meta.filename) }, staged.stored),
      );
    },

    async list(principal, page) {
      const rows = await files.list(await deps.orgIdFor(principal), { ...page, limit: page.limit + 1 });
      return { items: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
    },

    get: uploaded,

    async getByMd5(principal, md5) {
      const file = await files.findByMd5(await deps.orgIdFor(principal), md5.toLowerCase());
      if (!file) throw new NotFoundError('file', md5);
      return file;
    },

    async delete(principal, fileId) {
      const file = await uploaded(principal, fileId);
      if (principal.kind !== 'user' || !tierMayDeleteFiles(principal.tier)) {
        throw new PermissionDeniedError(
          'Deleting files is available on the Pro and Enterprise tiers only.',
          'tier_not_allowed',
        );
      }
      const deleted = await remove(file);
      if (!deleted) throw new NotFoundError('file', fileId);
      return deleted;
    },

    async sweepGuestFiles(at = now()) {
      if (guestTtlMs <= 0) return 0;
      const cutoff = new Date(at.getTime() - guestTtlMs);
      let removed = 0;
      for (;;) {
        const batch = await files.guestFilesBefore(cutoff, 200);
        for (const file of batch) if (await remove(file)) removed += 1;
        if (batch.length < 200) return removed;
      }
    },

    async createPresignedUpload(principal, meta, expiresInSeconds) {
      if (principal.kind === 'anonymous') deps.guestQuota?.take(principal.clientIp, 0);
      const orgId = await deps.orgIdFor(principal);
      const expiresAt = new Date(now().getTime() + expiresInSeconds * 1000);
      await files.deleteExpiredPending(now());
      const file = await files.insertPending({ orgId, ...meta, filename: cleanFilename(meta.filename) }, expiresAt);
      const path = signer.signedPath('PUT', uploadPath(file.id), expiresAt.getTime() / 1000);
      return { file, uploadPath: path, expiresAt };
    },

    async receivePresignedUpload(fileId, signed, source) {
      if (!signer.verify('PUT', uploadPath(fileId), signed, nowSeconds())) throw new NotFoundError('upload', fileId);
      const pending = await files.getBySignedId(fileId);
      if (!pending || pending.status !== 'pending') {
        throw new ConflictError(`File '${fileId}' has already been uploaded`, 'upload_already_completed');
      }
      const staged = await blobs.stage(source, { maxBytes: deps.limits.maxUploadBytes });
      const done = await commitUnderLock(staged, () => files.completePending(pending.orgId, fileId, staged.stored));
      if (!done) throw new ConflictError(`File '${fileId}' has already been uploaded`, 'upload_already_completed');
      return done;
    },

    async verifyUpload(principal, fileId) {
      const file = await files.get(await deps.orgIdFor(principal), fileId);
      if (!file) throw new NotFoundError('file', fileId);
      if (file.status !== 'uploaded') {
        throw new ConflictError(
          `No bytes have arrived for file '${fileId}' yet: PUT them to the presigned URL first.`,
          'upload_incomplete',
        );
      }
      return file;
    },

    async openSignedContent(fileId, signed) {
      const file = signer.verify('GET', contentPath(fileId), signed, nowSeconds())
        ? await files.getBySignedId(fileId)
        : null;
      if (!file || file.status !== 'uploaded') throw new NotFoundError('file', fileId);
      return openBytes(file);
    },

    async openContent(principal, fileId) {
      return openBytes(await uploaded(principal, fileId));
    },

    publicPath(file) {
      return signer.signedPath('GET', contentPath(file.id), nowSeconds() + deps.limits.urlTtlSeconds);
    },
  };
}

/** Keeps the base name only, without control characters, at most 255 characters; never empty. */
export function cleanFilename(name: string): string {
  const base = path.posix.basename(name.replace(/\\/g, '/'));
  // eslint-disable-next-line no-control-regex
  const cleaned = base.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return (cleaned || 'upload').slice(0, 255);
}
