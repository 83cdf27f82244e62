/**
 * Artifacts: bytes tools write during a run (and inputs a run keeps), filed under an execution or a session and
 * read back by object id or filename. Bytes go to the blob store first and the row second under the per-hash lock
 * the files service uses, so a concurrent file delete of the same content cannot remove them.
 *
 * `writeSoon` files an artifact nobody waits for (an execution's steps.json) after the caller's answer: the blob's
 * file creation, folder and fsyncs cost more than a whole program replay (bench `agents`). Reads of its scope in this
 * process (list, read by filename) wait for it first, so a client that lists right after its run still finds it;
 * `drain` waits for the rest at shutdown.
 *
 * With `holdBackground` (SQLite: one process owns the records, so every read of a scope comes through here) such
 * writes also wait for a quiet moment: they start once no other has been asked for `quietMs`, or when more than
 * `maxHeld` wait, or when a read of their scope needs them. A burst of runs (program replays a few ms apart) then
 * answers without the blob writes of the runs before it competing for the CPU and the disk; they run while the
 * process waits (an upstream call, an idle moment). What a crash loses is unchanged in kind: a background write not
 * yet done, at most `maxHeld` of them instead of the few in flight; steps.json is a copy of the steps (outputs
 * included) the execution record keeps. On PostgreSQL another replica may list the scope, so writes start
 * at once there.
 */
import { Readable } from 'node:stream';
import type { BlobStore } from '../blobs/types';
import type { Principal } from '../domain/account';
import { ARTIFACT_PREFIX, type ArtifactKind, type ArtifactRecord } from '../domain/artifact';
import { NotFoundError } from '../domain/errors';
import type { KeyedMutex } from '../lib/keyed-mutex';
import type { ArtifactScope, ArtifactStore } from '../stores/types/artifact';

export interface ArtifactsServiceDeps {
  store: ArtifactStore;
  blobs: BlobStore;
  locks: KeyedMutex;
  orgIdFor(principal: Principal): Promise<string>;
  maxBytes: number;
  /** Hold background writes for a quiet moment (see the header); null or absent: start them at once. */
  holdBackground?: { quietMs: number; maxHeld: number } | null;
}

export interface NewArtifact {
  kind: ArtifactKind;
  filename: string;
  mimeType: string;
  bytes: Buffer;
}

export interface ArtifactsService {
  write(principal: Principal, scope: ArtifactScope, artifact: NewArtifact): Promise<ArtifactRecord>;
  /** @throws NotFoundError (`artifact_not_found`) for unknown ids and other organisations' artifacts. */
  get(principal: Principal, objectId: string): Promise<ArtifactRecord>;
  /** Metadata and bytes by object id, or by filename within a scope. */
  read(
    principal: Principal,
    by: { objectId: string } | { filename: string; scope: ArtifactScope },
  ): Promise<{ artifact: ArtifactRecord; bytes: Buffer }>;
  list(
    principal: Principal,
    scope: ArtifactScope,
    page: { offset: number; limit: number },
  ): Promise<{ items: ArtifactRecord[]; total: number }>;
  /** Writes the artifact in the background; a failure goes to `onError`. Reads of its scope wait for it. */
  writeSoon(principal: Principal, scope: ArtifactScope, artifact: NewArtifact, onError: (error: unknown) => void): void;
  /** Waits for every background write (shutdown, before the database closes). */
  drain(): Promise<void>;
}

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** `<prefix>_<6 chars>`, the reference format clients parse. */
export function newObjectId(kind: ArtifactKind): string {
  let suffix = '';
  for (const byte of crypto.getRandomValues(new Uint8Array(6))) suffix += ID_ALPHABET[byte % ID_ALPHABET.length];
  return `${ARTIFACT_PREFIX[kind]}_${suffix}`;
}

export function createArtifactsService(deps: ArtifactsServiceDeps): ArtifactsService {
  const { store, blobs, locks } = deps;
  /** Background writes going on or held, by scope key. */
  const pending = new Map<string, Set<Promise<unknown>>>();
  const held = createHeldWrites(deps.holdBackground ?? null);
  const scopeKey = (scope: ArtifactScope): string => `${scope.executionId ?? ''}\u0000${scope.sessionId ?? ''}`;
  const written = async (scope: ArtifactScope): Promise<void> => {
    const key = scopeKey(scope);
    held.release(key);
    const writes = pending.get(key);
    if (writes) await Promise.allSettled([...writes]);
  };

  async function bytesOf(artifact: ArtifactRecord): Promise<Buffer> {
    const bytes = await blobs.read(artifact.sha256);
    if (!bytes) throw new NotFoundError('artifact', artifact.objectId);
    return bytes;
  }

  const service: ArtifactsService = {
    async write(principal, scope, artifact) {
      const orgId = await deps.orgIdFor(principal);
      const staged = await blobs.stage(Readable.from([artifact.bytes]), { maxBytes: deps.maxBytes });
      try {
        return await locks.run(staged.stored.sha256, async () => {
          await staged.commit();
          for (;;) {
            const record: ArtifactRecord = {
              objectId: newObjectId(artifact.kind),
              orgId,
              executionId: scope.executionId ?? null,
              sessionId: scope.sessionId ?? null,
              kind: artifact.kind,
              filename: artifact.filename,
              mimeType: artifact.mimeType,
              sha256: staged.stored.sha256,
              sizeBytes: staged.stored.bytes,
              createdAt: new Date(),
            };
            if (await store.insert(record, staged.stored)) return record;
          }
        });
      } finally {
        await staged.discard();
      }
    },

    async get(principal, objectId) {
      const found = await store.get(await deps.orgIdFor(principal), objectId);
      if (!found) throw new NotFoundError('artifact', objectId);
      return found;
    },

    async read(principal, by) {
      if ('objectId' in by) {
        const artifact = await service.get(principal, by.objectId);
        return { artifact, bytes: await bytesOf(artifact) };
      }
      await written(by.scope);
      const artifact = await store.findByFilename(await deps.orgIdFor(principal), by.scope, by.filename);
      if (!artifact) throw new NotFoundError('artifact', by.filename);
      return { artifact, bytes: await bytesOf(artifact) };
    },

    async list(principal, scope, page) {
      await written(scope);
      const orgId = await deps.orgIdFor(principal);
      const [items, total] = await Promise.all([store.list(orgId, scope, page), store.count(orgId, scope)]);
      return { items, total };
    },

    writeSoon(principal, scope, artifact, onError) {
      const key = scopeKey(scope);
      const writes = pending.get(key) ?? new Set<Promise<unknown>>();
      pending.set(key, writes);
      const write: Promise<unknown> = held
        .gate(key)
        .then(() => service.write(principal, scope, artifact))
        .catch(onError)
        .finally(() => {
          writes.delete(write);
          if (writes.size === 0 && pending.get(key) === writes) pending.delete(key);
        });
      writes.add(write);
    },

    async drain() {
      while (pending.size > 0) {
        held.releaseAll();
        await Promise.allSettled([...pending.values()].flatMap((writes) => [...writes]));
      }
    },
  };
  return service;
}

/** The gates of held background writes: each opens on a quiet moment, past `maxHeld`, or when its scope is read. */
function createHeldWrites(hold: { quietMs: number; maxHeld: number } | null) {
  const gates: { key: string; open: () => void }[] = [];
  let quiet: NodeJS.Timeout | null = null;
  const releaseAll = (): void => {
    for (const gate of gates.splice(0)) gate.open();
  };
  return {
    gate(key: string): Promise<void> {
      if (!hold) return Promise.resolve();
      const opened = new Promise<void>((open) => gates.push({ key, open }));
      if (gates.length > hold.maxHeld) gates.shift()?.open();
      // Each new write pushes the quiet moment back; an idle process does not wait for the timer (unref).
      if (quiet) quiet.refresh();
      else quiet = setTimeout(() => ((quiet = null), releaseAll()), hold.quietMs).unref();
      return opened;
    },
    release(key: string): void {
      for (let i = gates.length - 1; i >= 0; i -= 1) {
        const gate = gates[i];
        if (gate?.key === key) {
          gates.splice(i, 1);
          gate.open();
        }
      }
    },
    releaseAll,
  };
}
