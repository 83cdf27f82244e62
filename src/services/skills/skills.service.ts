/**
 * Skills: versioned SKILL.md bundles stored as zips, resolved for the agent runtime, extraction and MCP.
 *
 * A zip is checked and parsed completely before anything is written; then its bytes go to the blob store and the
 * record to the store under a per-hash lock (the files service's order), so a refused bundle leaves nothing and a
 * stored record never points at missing bytes. Reads are scoped: a caller sees their organisation's skills plus
 * the public ones; anything else is "not found". Parsed views are cached per version (versions never change).
 */
import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer as readAll } from 'node:stream/consumers';
import type { Principal } from '../../domain/account';
import {
  AuthenticationRequiredError,
  BadRequestError,
  InvalidSkillBundleError,
  NotFoundError,
  PermissionDeniedError,
  SchemaInvalidError,
} from '../../domain/errors';
import type { ParsedSkill, SkillRecord, SkillReference, SkillResolver } from '../../domain/skill';
import type { BlobStore } from '../../blobs/types';
import type { KeyedMutex } from '../../lib/keyed-mutex';
import type { UrlSigner } from '../../lib/url-signer';
import type { SkillListQuery, SkillScope, SkillSource, SkillStore } from '../../stores/types';
import { isUuid } from '../../lib/uuid';
import { schemaProblem } from '../../lib/json-schema';
import type { BundleLimits } from './skill-bundle';
import { draftFiles, type SkillAuthor } from './skill-authoring';
import { zipFiles } from './skill-pack';
import { checkSkillName, loadSkillView, parseSkillZip, skillVersionOf, type CheckedSkill } from './skill-view';

export interface SkillsServiceDeps {
  store: SkillStore;
  blobs: BlobStore;
  locks: KeyedMutex;
  signer: UrlSigner;
  limits: BundleLimits;
  /** An uploaded file of the caller's organisation, its size and its bytes (create and update by `file_id`). */
  openFile: (principal: Principal, fileId: string) => Promise<{ bytes: number; stream: Readable }>;
  /**
   * A chat session's history as one prompt; null when the caller may not read it (the chat history access rules,
   * `sessionToken` being the caller's `X-Session-Token`) or it does not exist.
   */
  sessionPrompt: (
    principal: Principal,
    sessionId: string,
    sessionToken: string | null,
  ) => Promise<{ prompt: string; title: string } | null>;
  /** Writes SKILL.md and schema.json from a prompt (upstream model or template). */
  author: SkillAuthor;
  /** Parsed views kept in memory (least recently used go first). */
  cacheSize?: number;
  now?: () => Date;
}

export interface CreateSkillOptions {
  /** Overrides the front matter's `name`. */
  name?: string | null;
  /** Overrides the front matter's `description`. */
  description?: string | null;
  source?: SkillSource;
}

/** Where `POST /v1/skills/create` takes the skill from: exactly one source. */
export type SkillCreateSource =
  | { kind: 'file'; fileId: string }
  | { kind: 'prompt'; prompt: string; jsonSchema: Record<string, unknown> | null }
  | { kind: 'session'; sessionId: string; sessionToken?: string | null; jsonSchema: Record<string, unknown> | null };

/** A signed request for a download, as it arrives on the URL. */
export interface SignedDownload {
  expires?: unknown;
  signature?: unknown;
}

export interface SkillsService extends SkillResolver {
  /**
   * Checks, parses and stores a zip as a new version of the caller's organisation. The same bytes under the same
   * name return the version already stored.
   * @throws InvalidSkillBundleError (nothing stored) for a bundle that breaks a rule.
   */
  createFromZip(principal: Principal, zip: Buffer, options?: CreateSkillOptions): Promise<SkillRecord>;
  /**
   * Creates from an uploaded zip (`file_id`), a prompt (SKILL.md and schema.json are written for it) or a chat
   * session's history (as the prompt). Name and description default from the front matter.
   */
  create(
    principal: Principal,
    source: SkillCreateSource,
    options?: { name?: string | null; description?: string | null },
  ): Promise<SkillRecord>;
  /** Stores a public (built-in) version; returns it and whether it was new. */
  createPublic(zip: Buffer, options?: CreateSkillOptions): Promise<{ record: SkillRecord; created: boolean }>;
  /** A new version with the same name as `skillId`'s; the old version stays readable. */
  update(
    principal: Principal,
    skillId: string,
    zip: Buffer,
    options?: { description?: string | null },
  ): Promise<SkillRecord>;
  /** {@link SkillsService.update} with the zip of an uploaded file. */
  updateFromFile(
    principal: Principal,
    skillId: string,
    fileId: string,
    options?: { description?: string | null },
  ): Promise<SkillRecord>;
  /** @throws NotFoundError also for other organisations' skills. */
  get(principal: Principal, skillId: string): Promise<SkillRecord>;
  /** By id, by name (`latest` unless a version is given) or by name and version. */
  lookup(
    principal: Principal,
    query: { id?: string | null; name?: string | null; version?: string | null },
  ): Promise<SkillRecord>;
  list(principal: Principal, query: SkillListQuery): Promise<SkillRecord[]>;
  /** Path and query of a signed link serving the stored zip until `expiresInSeconds` from now. */
  downloadPath(principal: Principal, skillId: string, expiresInSeconds: number): Promise<string>;
  /** The exact stored bytes behind a signed link. @throws NotFoundError for a bad or expired signature. */
  openSignedDownload(skillId: string, signed: SignedDownload): Promise<{ record: SkillRecord; zip: Buffer }>;
}

const md5Hex = (data: Buffer): string => createHash('md5').update(data).digest('hex');

export const downloadContentPath = (skillId: string): string => `/v1/skills/${encodeURIComponent(skillId)}/content`;

/** The read scope of a caller: their organisation plus public skills; guests see public ones only. */
export const scopeOf = (principal: Principal): SkillScope => ({
  orgId: principal.kind === 'user' ? principal.orgId : null,
});

/** Parsed views of stored versions, by record id, least recently used first (versions never change). */
export type SkillViewCache = Map<string, Promise<ParsedSkill>>;

export function createSkillsService(deps: SkillsServiceDeps): SkillsService {
  const views: SkillViewCache = new Map();
  return {
    createFromZip: (principal, zip, options) => createFromZip(deps, principal, zip, options),
    create: (principal, source, options) => createSkill(deps, principal, source, options),
    createPublic: (zip, options) => createPublicSkill(deps, zip, options),
    update: (principal, skillId, zip, options) => updateSkill(deps, principal, skillId, zip, options),
    updateFromFile: (principal, skillId, fileId, options) =>
      updateSkillFromFile(deps, principal, skillId, fileId, options),
    get: (principal, skillId) => visibleSkill(deps, principal, skillId),
    lookup: (principal, query) => lookupSkill(deps, principal, query),
    list: (principal, query) => deps.store.list(scopeOf(principal), query),
    downloadPath: (principal, skillId, expiresInSeconds) => downloadPath(deps, principal, skillId, expiresInSeconds),
    openSignedDownload: (skillId, signed) => openSignedDownload(deps, skillId, signed),
    resolve: (principal, reference) => resolveSkill(deps, views, principal, reference),
  };
}

const nowOf = (deps: SkillsServiceDeps): Date => deps.now?.() ?? new Date();

function ownerOf(principal: Principal): string {
  if (principal.kind !== 'user') throw new AuthenticationRequiredError();
  return principal.orgId;
}

async function save(
  deps: SkillsServiceDeps,
  orgId: string | null,
  checked: CheckedSkill,
  zip: Buffer,
  options: CreateSkillOptions,
): Promise<{ record: SkillRecord; created: boolean }> {
  const { store, blobs } = deps;
  const name = checkSkillName(options.name ?? checked.content.name);
  const at = nowOf(deps);
  const record: SkillRecord = {
    id: randomUUID(),
    name,
    skillVersion: skillVersionOf(at, checked.sha256),
    description: options.description?.trim() || checked.content.description,
    orgId,
    isPublic: orgId === null,
    status: 'completed',
    contentHash: checked.sha256,
    sizeBytes: zip.length,
    createdAt: at,
    updatedAt: at,
  };
  const source = options.source ?? 'zip';
  // Under the hash's lock no delete of the same bytes can run: bytes already stored (the uploaded file a skill is
  // made from, or an earlier version) are referenced as they are instead of being written and synced again.
  return deps.locks.run(checked.sha256, async () => {
    const existing = await blobs.open(checked.sha256);
    if (existing) {
      // Only its existence matters: close it, and let a late open error (a removed folder) go nowhere.
      existing.on('error', () => undefined);
      existing.destroy();
      return store.insert(record, source, { bytes: zip.length, md5: md5Hex(zip), sha256: checked.sha256 });
    }
    const staged = await blobs.stage(Readable.from([zip]), { maxBytes: zip.length });
    try {
      await staged.commit();
      return await store.insert(record, source, staged.stored);
    } finally {
      await staged.discard();
    }
  });
}

/** @throws NotFoundError also for other organisations' skills. */
export async function visibleSkill(
  deps: SkillsServiceDeps,
  principal: Principal,
  skillId: string,
): Promise<SkillRecord> {
  const record = isUuid(skillId) ? await deps.store.get(scopeOf(principal), skillId) : null;
  if (!record) throw new NotFoundError('skill', skillId);
  return record;
}

async function byName(
  deps: SkillsServiceDeps,
  principal: Principal,
  name: string,
  version: string,
): Promise<SkillRecord> {
  const record = await deps.store.findByName(scopeOf(principal), name, version);
  if (!record) throw new NotFoundError('skill', version === 'latest' ? name : `${name}:${version}`);
  return record;
}

function view(deps: SkillsServiceDeps, views: SkillViewCache, record: SkillRecord): Promise<ParsedSkill> {
  const cached = views.get(record.id);
  if (cached) {
    views.delete(record.id);
    views.set(record.id, cached);
    return cached;
  }
  const loading = loadSkillView(record, () => readZip(deps, record), deps.limits);
  loading.catch(() => views.delete(record.id));
  views.set(record.id, loading);
  if (views.size > (deps.cacheSize ?? 256)) views.delete(views.keys().next().value ?? '');
  return loading;
}

async function readZip(deps: SkillsServiceDeps, record: SkillRecord): Promise<Buffer> {
  const zip = await deps.blobs.read(record.contentHash);
  if (!zip) throw new NotFoundError('skill', record.id);
  return zip;
}

/** An uploaded zip's bytes; one larger than the whole bundle may be is refused before a byte is read. */
async function readUploadedZip(deps: SkillsServiceDeps, principal: Principal, fileId: string): Promise<Buffer> {
  const { bytes, stream } = await deps.openFile(principal, fileId);
  if (bytes > deps.limits.maxTotalBytes) {
    stream.destroy();
    throw new InvalidSkillBundleError(
      'total_too_large',
      null,
      `the zip (${bytes} bytes) is larger than the bundle limit of ${deps.limits.maxTotalBytes} bytes`,
    );
  }
  return readAll(stream);
}

/** See {@link SkillsService.createFromZip}. */
export async function createFromZip(
  deps: SkillsServiceDeps,
  principal: Principal,
  zip: Buffer,
  options: CreateSkillOptions = {},
): Promise<SkillRecord> {
  const orgId = ownerOf(principal);
  const checked = await parseSkillZip(zip, deps.limits);
  return (await save(deps, orgId, checked, zip, options)).record;
}

/** A new version with the same name as `skillId`'s; the old version stays readable. */
export async function updateSkill(
  deps: SkillsServiceDeps,
  principal: Principal,
  skillId: string,
  zip: Buffer,
  options: { description?: string | null } = {},
): Promise<SkillRecord> {
  const orgId = ownerOf(principal);
  const previous = await visibleSkill(deps, principal, skillId);
  if (previous.orgId !== orgId) {
    throw new PermissionDeniedError(`Skill '${previous.name}' is public and read-only; create your own instead.`);
  }
  const checked = await parseSkillZip(zip, deps.limits);
  const description = options.description ?? checked.content.description;
  return (await save(deps, orgId, checked, zip, { name: previous.name, description, source: 'zip' })).record;
}

/** See {@link SkillsService.create}: from an uploaded zip, a prompt or a chat session's history. */
export async function createSkill(
  deps: SkillsServiceDeps,
  principal: Principal,
  source: SkillCreateSource,
  options: { name?: string | null; description?: string | null } = {},
): Promise<SkillRecord> {
  ownerOf(principal);
  if (source.kind === 'file') {
    return createFromZip(deps, principal, await readUploadedZip(deps, principal, source.fileId), options);
  }
  let prompt: string;
  let subject: string | null = null;
  if (source.kind === 'session') {
    const history = await deps.sessionPrompt(principal, source.sessionId, source.sessionToken ?? null);
    if (history === null) throw new NotFoundError('chat', source.sessionId);
    prompt = history.prompt;
    subject = history.title;
  } else {
    prompt = source.prompt;
  }
  if (prompt.trim() === '') throw new BadRequestError('The prompt is empty.', 'invalid_skill_source', 'prompt');
  // The same schema is refused here as inside a zip (and on every other route that takes one).
  const problem = source.jsonSchema ? schemaProblem(source.jsonSchema) : null;
  if (problem) throw new SchemaInvalidError('json_schema', problem);
  const draft = await deps.author.draft({
    prompt,
    jsonSchema: source.jsonSchema,
    subject,
    name: options.name ? checkSkillName(options.name) : null,
    description: options.description ?? null,
  });
  const zip = await zipFiles(draftFiles(draft));
  return createFromZip(deps, principal, zip, { source: source.kind });
}

/** Stores a public (built-in) version; returns it and whether it was new. */
export async function createPublicSkill(
  deps: SkillsServiceDeps,
  zip: Buffer,
  options: CreateSkillOptions = {},
): Promise<{ record: SkillRecord; created: boolean }> {
  return save(deps, null, await parseSkillZip(zip, deps.limits), zip, { source: 'builtin', ...options });
}

/** {@link updateSkill} with the zip of an uploaded file. */
export async function updateSkillFromFile(
  deps: SkillsServiceDeps,
  principal: Principal,
  skillId: string,
  fileId: string,
  options: { description?: string | null } = {},
): Promise<SkillRecord> {
  await visibleSkill(deps, principal, skillId);
  return updateSkill(deps, principal, skillId, await readUploadedZip(deps, principal, fileId), options);
}

/** By id, by name (`latest` unless a version is given) or by name and version. */
export async function lookupSkill(
  deps: SkillsServiceDeps,
  principal: Principal,
  query: { id?: string | null; name?: string | null; version?: string | null },
): Promise<SkillRecord> {
  if (query.id) return visibleSkill(deps, principal, query.id);
  if (query.name) return byName(deps, principal, query.name, query.version || 'latest');
  throw new NotFoundError('skill', '');
}

/** Path and query of a signed link serving the stored zip until `expiresInSeconds` from now. */
export async function downloadPath(
  deps: SkillsServiceDeps,
  principal: Principal,
  skillId: string,
  expiresInSeconds: number,
): Promise<string> {
  const record = await visibleSkill(deps, principal, skillId);
  const expiresAt = Math.floor(nowOf(deps).getTime() / 1000) + expiresInSeconds;
  return deps.signer.signedPath('GET', downloadContentPath(record.id), expiresAt);
}

/** The exact stored bytes behind a signed link. @throws NotFoundError for a bad or expired signature. */
export async function openSignedDownload(
  deps: SkillsServiceDeps,
  skillId: string,
  signed: SignedDownload,
): Promise<{ record: SkillRecord; zip: Buffer }> {
  const now = Math.floor(nowOf(deps).getTime() / 1000);
  const valid = deps.signer.verify('GET', downloadContentPath(skillId), signed, now);
  // The signature is the credential: the record is read across organisations only once it checks out.
  const record = valid && isUuid(skillId) ? await deps.store.getBySignedId(skillId) : null;
  if (!record) throw new NotFoundError('skill', skillId);
  return { record, zip: await readZip(deps, record) };
}

/** A skill the agent runtime, extraction or MCP names, parsed: stored (by id or name) or inline. */
export async function resolveSkill(
  deps: SkillsServiceDeps,
  views: SkillViewCache,
  principal: Principal,
  reference: SkillReference,
): Promise<ParsedSkill> {
  switch (reference.kind) {
    case 'id':
      return view(
        deps,
        views,
        isUuid(reference.id)
          ? await visibleSkill(deps, principal, reference.id)
          : await byName(deps, principal, reference.id, reference.version),
      );
    case 'name':
      return view(deps, views, await byName(deps, principal, reference.name, reference.version));
    case 'inline':
      return inlineView(principal, reference, deps.limits);
  }
}

/** An inline skill (a zip in the request): checked and parsed, never stored; its id is derived from its bytes. */
async function inlineView(
  principal: Principal,
  reference: Extract<SkillReference, { kind: 'inline' }>,
  limits: BundleLimits,
): Promise<ParsedSkill> {
  const checked = await parseSkillZip(reference.zip, limits);
  const at = new Date();
  const record: SkillRecord = {
    id: `inline_${checked.sha256.slice(0, 16)}`,
    name: checkSkillName(reference.name ?? checked.content.name),
    skillVersion: skillVersionOf(at, checked.sha256),
    description: reference.description?.trim() || checked.content.description,
    orgId: principal.kind === 'user' ? principal.orgId : null,
    isPublic: false,
    status: 'completed',
    contentHash: checked.sha256,
    sizeBytes: reference.zip.length,
    createdAt: at,
    updatedAt: at,
  };
  return loadSkillView(record, async () => reference.zip, limits, checked);
}
