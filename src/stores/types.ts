/**
 * Store interfaces: what services may ask of persistence.
 *
 * Every method is async so a Postgres implementation can slot in beside SQLite; each method is atomic on its own.
 * Every read of tenant data takes the organisation id explicitly, so a missing scope is a type error, not a leak.
 */
import type { ApiKeyRecord, Organisation, OrganisationKind, Tier, User } from '../domain/account';
import type { FilePurpose, FileRecord } from '../domain/file';

/** What an API key resolves to, in one read. */
export interface KeyOwner {
  key: ApiKeyRecord;
  user: User;
  org: Organisation;
}

export interface AccountStore {
  createOrg(input: { name: string; tier: Tier; kind: OrganisationKind }): Promise<Organisation>;
  getOrg(orgId: string): Promise<Organisation | null>;
  /** Finds an organisation by id or by its unique name. */
  findOrg(idOrName: string): Promise<Organisation | null>;
  setOrgTier(orgId: string, tier: Tier): Promise<void>;
  createUser(input: { orgId: string; name: string; isSuperuser: boolean }): Promise<User>;
  /** The earliest superuser of an organisation, if any. */
  findSuperuser(orgId: string): Promise<User | null>;
  /** Stores a key by its hash; the secret itself never reaches the store. */
  createKey(input: {
    orgId: string;
    userId: string;
    name: string;
    keyHash: string;
    prefix: string;
  }): Promise<ApiKeyRecord>;
  /** Active (not revoked) key by hash, with its user and organisation. */
  findKeyOwner(keyHash: string): Promise<KeyOwner | null>;
  revokeKey(keyId: string): Promise<ApiKeyRecord | null>;
  countOrgs(): Promise<number>;
}

export interface WalletStore {
  /** Adds (or with a negative amount, removes) micro-dollars and records the entry; returns the new balance. */
  credit(orgId: string, amountMicros: number, reason: string): Promise<number>;
  balance(orgId: string): Promise<number>;
}

export interface NewFile {
  orgId: string;
  filename: string;
  purpose: FilePurpose;
  contentType: string;
}

export interface StoredBytes {
  bytes: number;
  md5: string;
  sha256: string;
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
