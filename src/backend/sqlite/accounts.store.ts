/**
 * SQLite AccountStore: organisations, users and hashed API keys.
 *
 * Key lookups run on every API call, so their answers are remembered (up to KEY_CACHE_ENTRIES keys) and the
 * memory is exact rather than time-limited: this store forgets everything when it changes a key or an
 * organisation itself, and when `PRAGMA data_version` shows that another connection (the CLI revoking a key while
 * the server runs) committed to the file.
 */
import { randomUUID } from 'node:crypto';
import type { ApiKeyRecord, Organisation, User } from '../../domain/account';
import type { AccountStore, KeyOwner } from '../../stores/types';
import type { SqliteDatabase } from './database';
import { watchOtherCommits } from './other-commits';
import { type UserRow, type OrgRow, type KeyRow, toUser, toOrg, toKey } from '../../stores/rows/accounts.rows';

const KEY_CACHE_ENTRIES = 10_000;

export function createSqliteAccountStore(db: SqliteDatabase): AccountStore {
  const otherCommitted = watchOtherCommits(db);
  const keyOwners = new Map<string, KeyOwner>();
  /** The cache, emptied first if another connection has committed since the last look. */
  const cachedKeyOwners = (): Map<string, KeyOwner> => {
    if (otherCommitted()) keyOwners.clear();
    return keyOwners;
  };
  const insertOrg = db.prepare('INSERT INTO organisations (id, name, tier, kind, created_at) VALUES (?, ?, ?, ?, ?)');
  const insertWallet = db.prepare('INSERT INTO wallets (org_id, balance_micros, updated_at) VALUES (?, 0, ?)');
  const orgById = db.prepare<[string], OrgRow>('SELECT * FROM organisations WHERE id = ?');
  const orgByIdOrName = db.prepare<[string, string, string], OrgRow>(
    'SELECT * FROM organisations WHERE id = ? OR name = ? ORDER BY (id = ?) DESC LIMIT 1',
  );
  const updateTier = db.prepare('UPDATE organisations SET tier = ? WHERE id = ?');
  const insertUser = db.prepare(
    'INSERT INTO users (id, org_id, name, is_superuser, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const superuser = db.prepare<[string], UserRow>(
    'SELECT * FROM users WHERE org_id = ? AND is_superuser = 1 ORDER BY created_at, id LIMIT 1',
  );
  const insertKey = db.prepare(
    'INSERT INTO api_keys (id, org_id, user_id, name, key_hash, prefix, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const keyOwner = db.prepare<[string], KeyRow & { u: string; o: string }>(
    `SELECT k.id, k.org_id, k.user_id, k.name, k.prefix, k.created_at, k.revoked_at,
            json_object('id', u.id, 'org_id', u.org_id, 'name', u.name, 'is_superuser', u.is_superuser,
                        'created_at', u.created_at) AS u,
            json_object('id', o.id, 'name', o.name, 'tier', o.tier, 'kind', o.kind, 'created_at', o.created_at) AS o
       FROM api_keys k JOIN users u ON u.id = k.user_id JOIN organisations o ON o.id = k.org_id
      WHERE k.key_hash = ? AND k.revoked_at IS NULL`,
  );
  const revoke = db.prepare<[string, string], KeyRow>(
    'UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? RETURNING *',
  );
  const keysOfOrg = db.prepare<[string], KeyRow>(
    'SELECT id, org_id, user_id, name, prefix, created_at, revoked_at FROM api_keys WHERE org_id = ? ORDER BY created_at, name, id',
  );
  const orgCount = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM organisations');

  const createOrgTx = db.transaction((org: Organisation) => {
    insertOrg.run(org.id, org.name, org.tier, org.kind, org.createdAt.toISOString());
    insertWallet.run(org.id, org.createdAt.toISOString());
  });

  return {
    async createOrg({ name, tier, kind }) {
      const org: Organisation = { id: randomUUID(), name, tier, kind, createdAt: new Date() };
      createOrgTx(org);
      return org;
    },
    async getOrg(orgId) {
      const row = orgById.get(orgId);
      return row ? toOrg(row) : null;
    },
    async findOrg(idOrName) {
      const row = orgByIdOrName.get(idOrName, idOrName, idOrName);
      return row ? toOrg(row) : null;
    },
    async setOrgTier(orgId, tier) {
      updateTier.run(tier, orgId);
      keyOwners.clear();
    },
    async createUser({ orgId, name, isSuperuser }) {
      const user: User = { id: randomUUID(), orgId, name, isSuperuser, createdAt: new Date() };
      insertUser.run(user.id, orgId, name, isSuperuser ? 1 : 0, user.createdAt.toISOString());
      return user;
    },
    async findSuperuser(orgId) {
      const row = superuser.get(orgId);
      return row ? toUser(row) : null;
    },
    async createKey({ orgId, userId, name, keyHash, prefix }) {
      const key: ApiKeyRecord = {
        id: randomUUID(),
        orgId,
        userId,
        name,
        prefix,
        createdAt: new Date(),
        revokedAt: null,
      };
      insertKey.run(key.id, orgId, userId, name, keyHash, prefix, key.createdAt.toISOString());
      return key;
    },
    async findKeyOwner(keyHash): Promise<KeyOwner | null> {
      const cache = cachedKeyOwners();
      const cached = cache.get(keyHash);
      if (cached) return cached;
      const row = keyOwner.get(keyHash);
      if (!row) return null;
      const owner: KeyOwner = {
        key: toKey(row),
        user: toUser(JSON.parse(row.u) as UserRow),
        org: toOrg(JSON.parse(row.o) as OrgRow),
      };
      if (cache.size >= KEY_CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
      cache.set(keyHash, owner);
      return owner;
    },
    async revokeKey(keyId) {
      keyOwners.clear();
      const row = revoke.get(new Date().toISOString(), keyId);
      return row ? toKey(row) : null;
    },
    async listKeys(orgId) {
      return keysOfOrg.all(orgId).map(toKey);
    },
    async countOrgs() {
      return orgCount.get()?.n ?? 0;
    },
  };
}
