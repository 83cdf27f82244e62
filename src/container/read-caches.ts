/**
 * What a gateway call reads on every call, cached in the process on the shared backends (issue #43): an API key's
 * owner (key, user, organisation), a key's policy and an organisation's budget. Each kind is a ReadCache
 * (src/signals/read-cache.ts) whose entries every write of that kind drops, here and over the signal bus in every
 * replica. Only on PostgreSQL with the signals on Redis: on SQLite reads cost microseconds and a CLI writing the same
 * file has no bus; replicas sharing PostgreSQL without Redis have no bus between them either, so a key revoked
 * through one would stay usable on another until the entry expired.
 */
import type { Dialect } from '../backend/types';
import type { KeyPolicy } from '../services/admin/key-policies';
import type { OrgBudget } from '../services/admin/org-budgets';
import { createReadCache, passThroughReads, type ReadCache } from '../signals/read-cache';
import type { SignalBus } from '../signals/signal-bus';
import type { AccountStore, KeyOwner } from '../stores/types/account';

/** Longest a cached read is used when no write was announced (a writer without the bus, a lost signal). */
const READ_TTL_MS = 5_000;

export interface ReadCaches {
  keyOwners: ReadCache<KeyOwner | null>;
  keyPolicies: ReadCache<KeyPolicy | null>;
  orgBudgets: ReadCache<OrgBudget | null>;
}

export function createReadCaches(dialect: Dialect, bus: SignalBus, busSpansReplicas: boolean): ReadCaches {
  if (dialect === 'sqlite' || !busSpansReplicas) {
    return {
      keyOwners: passThroughReads(),
      keyPolicies: passThroughReads(),
      orgBudgets: passThroughReads(),
    };
  }
  const keyOwners = createReadCache<KeyOwner | null>({
    bus,
    channel: 'cache:accounts',
    ttlMs: READ_TTL_MS,
    // An unknown key is read again next time: a key just made on another replica must work at once.
    keep: (owner) => owner !== null,
  });
  // Their bus subscriptions end when the bus closes with the backend.
  return {
    keyOwners,
    keyPolicies: createReadCache({ bus, channel: 'cache:key-policies', ttlMs: READ_TTL_MS }),
    orgBudgets: createReadCache({ bus, channel: 'cache:org-budgets', ttlMs: READ_TTL_MS }),
  };
}

/**
 * The account store with `findKeyOwner` read through `owners`; every write (an organisation's tier, a user, a key
 * made or revoked) drops the cached owners in every replica before it resolves.
 */
export function withCachedKeyOwners(store: AccountStore, owners: ReadCache<KeyOwner | null>): AccountStore {
  const dropping =
    <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await write(...args);
      } finally {
        await owners.invalidate();
      }
    };
  return {
    getOrg: (orgId) => store.getOrg(orgId),
    findOrg: (idOrName) => store.findOrg(idOrName),
    findSuperuser: (orgId) => store.findSuperuser(orgId),
    listKeys: (orgId) => store.listKeys(orgId),
    countOrgs: () => store.countOrgs(),
    findKeyOwner: (keyHash) => owners.read(keyHash, () => store.findKeyOwner(keyHash)),
    createOrg: dropping(store.createOrg.bind(store)),
    setOrgTier: dropping(store.setOrgTier.bind(store)),
    createUser: dropping(store.createUser.bind(store)),
    createKey: dropping(store.createKey.bind(store)),
    revokeKey: dropping(store.revokeKey.bind(store)),
  };
}
