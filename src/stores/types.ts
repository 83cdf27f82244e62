/**
 * Store interfaces: what services may ask of persistence.
 *
 * Every method is async so a Postgres implementation can slot in beside SQLite; each method is atomic on its own.
 * Every read of tenant data takes the organisation id explicitly, so a missing scope is a type error, not a leak.
 */
import type { ApiKeyRecord, Organisation, OrganisationKind, Tier, User } from '../domain/account';
import type { FilePurpose, FileRecord, StoredBytes } from '../domain/file';
import type { Prediction, PredictionUsage, Status } from '../domain/prediction';
import type { SkillRecord } from '../domain/skill';
import type { FeedbackEntityType, FeedbackRecord } from '../domain/feedback';

export type { FeedbackEntityType, FeedbackRecord, StoredBytes };

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
  /** Files of guest organisations created before `cutoff`, oldest first, at most `limit` (for the expiry sweep). */
  guestFilesBefore(cutoff: Date, limit: number): Promise<FileRecord[]>;
  /** Every blob hash a record refers to (for the start-up sweep of orphan blobs). */
  referencedBlobs(): Promise<Set<string>>;
}

/** Fields a status change may set together with the new status. */
export interface PredictionUpdate {
  response?: unknown;
  usage?: PredictionUsage;
  errorMessage?: string | null;
  completedAt?: Date | null;
  attempts?: number;
}

export interface PredictionStore {
  /** Inserts the record and references its input blobs (recording the blobs) in one transaction. */
  insert(prediction: Prediction, inputBytes: StoredBytes[]): Promise<Prediction>;
  get(orgId: string, id: string): Promise<Prediction | null>;
  /** For the job runner, which works across organisations. */
  getById(id: string): Promise<Prediction | null>;
  list(orgId: string, page: { skip: number; limit: number }): Promise<Prediction[]>;
  /**
   * Moves the record to `to` only if it is in one of `from` (compare-and-set); returns the updated record, or
   * null when another writer moved it first.
   */
  transition(id: string, from: readonly Status[], to: Status, update?: PredictionUpdate): Promise<Prediction | null>;
  /** Records that were not finished when the process stopped: pending/enqueued (batch) and running. */
  unfinished(): Promise<Prediction[]>;
  recordDelivery(delivery: WebhookDelivery): Promise<void>;
  deliveries(predictionId: string): Promise<WebhookDelivery[]>;
}

export interface WebhookDelivery {
  predictionId: string;
  url: string;
  attempt: number;
  statusCode: number | null;
  outcome: 'delivered' | 'failed' | 'gave_up';
  error: string | null;
  createdAt: Date;
}

export interface FeedbackStore {
  insert(record: FeedbackRecord): Promise<FeedbackRecord>;
  list(
    orgId: string,
    entity: { type: FeedbackEntityType; id: string },
    page: { limit: number; offset: number },
  ): Promise<FeedbackRecord[]>;
}

/** How a skill version was made. */
export type SkillSource = 'zip' | 'prompt' | 'session' | 'builtin';

/**
 * Whose skills a read may see: `orgId`'s plus the public ones; `orgId: null` (a guest) sees public ones only.
 * Where an organisation and the public set both hold a name, the organisation's skill wins.
 */
export interface SkillScope {
  orgId: string | null;
}

export type SkillOrder = 'created_at' | 'updated_at' | 'name';

export interface SkillListQuery {
  limit: number;
  offset: number;
  orderBy: SkillOrder;
  descending: boolean;
  /** Only the latest version of each name. */
  grouped: boolean;
}

export interface SkillStore {
  /**
   * Inserts a version and records its zip blob in one transaction. When the scope already holds the same bytes under
   * the same name, nothing is written and that record is returned (`created: false`).
   */
  insert(
    record: SkillRecord,
    source: SkillSource,
    content: StoredBytes,
  ): Promise<{ record: SkillRecord; created: boolean }>;
  get(scope: SkillScope, id: string): Promise<SkillRecord | null>;
  /** A version by id whatever its organisation: only for signed download links, whose signature is the credential. */
  getBySignedId(id: string): Promise<SkillRecord | null>;
  /**
   * A version by name: `latest`, an exact `skill_version` string, or a 1-based revision number (`"3"`: the third
   * version created under that name).
   */
  findByName(scope: SkillScope, name: string, version: string): Promise<SkillRecord | null>;
  list(scope: SkillScope, query: SkillListQuery): Promise<SkillRecord[]>;
}
