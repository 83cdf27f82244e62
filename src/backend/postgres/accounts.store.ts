/**
 * PostgreSQL AccountStore: organisations, users and hashed API keys.
 *
 * Unlike the SQLite store, key lookups are not remembered: a key revoked on one replica (or by the CLI) must stop
 * working on every replica at once, and the lookup is one indexed join (bench `stores`: auth lookup).
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { ApiKeyRecord, Organisation, User } from '../../domain/account';
import { toKey, toOrg, toUser, type KeyRow, type OrgRow, type UserRow } from '../../stores/rows/accounts.rows';
import type { AccountStore, KeyOwner } from '../../stores/types';
import { withTransaction } from './database';

type OwnerRow = KeyRow & { u_name: string; u_is_superuser: number; u_created_at: string } & {
  o_name: string;
  o_tier: OrgRow['tier'];
  o_kind: OrgRow['kind'];
  o_created_at: string;
};

export function createPostgresAccountStore(pool: pg.Pool): AccountStore {
  const one = async <R extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<R | undefined> =>
    (await pool.query<R>(sql, params)).rows[0];

  return {
    async createOrg({ name, tier, kind }) {
      const org: Organisation = { id: randomUUID(), name, tier, kind, createdAt: new Date() };
      const at = org.createdAt.toISOString();
      await withTransaction(pool, async (client) => {
        await client.query('INSERT INTO organisations (id, name, tier, kind, created_at) VALUES ($1, $2, $3, $4, $5)', [
          org.id,
          name,
          tier,
          kind,
          at,
        ]);
        await client.query('INSERT INTO wallets (org_id, balance_micros, updated_at) VALUES ($1, 0, $2)', [org.id, at]);
      });
      return org;
    },
    async getOrg(orgId) {
      const row = await one<OrgRow>('SELECT * FROM organisations WHERE id = $1', [orgId]);
      return row ? toOrg(row) : null;
    },
    async findOrg(idOrName) {
      const row = await one<OrgRow>(
        'SELECT * FROM organisations WHERE id = $1 OR name = $1 ORDER BY (id = $1) DESC LIMIT 1',
        [idOrName],
      );
      return row ? toOrg(row) : null;
    },
    async setOrgTier(orgId, tier) {
      await pool.query('UPDATE organisations SET tier = $1 WHERE id = $2', [tier, orgId]);
    },
    async createUser({ orgId, name, isSuperuser }) {
      const user: User = { id: randomUUID(), orgId, name, isSuperuser, createdAt: new Date() };
      await pool.query('INSERT INTO users (id, org_id, name, is_superuser, created_at) VALUES ($1, $2, $3, $4, $5)', [
        user.id,
        orgId,
        name,
        isSuperuser,
        user.createdAt.toISOString(),
      ]);
      return user;
    },
    async findSuperuser(orgId) {
      const row = await one<UserRow>(
        'SELECT * FROM users WHERE org_id = $1 AND is_superuser ORDER BY created_at, id LIMIT 1',
        [orgId],
      );
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
      await pool.query(
        'INSERT INTO api_keys (id, org_id, user_id, name, key_hash, prefix, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
        [key.id, orgId, userId, name, keyHash, prefix, key.createdAt.toISOString()],
      );
      return key;
    },
    async findKeyOwner(keyHash): Promise<KeyOwner | null> {
      const row = await one<OwnerRow>(
        `SELECT k.id, k.org_id, k.user_id, k.name, k.prefix, k.created_at, k.revoked_at,
                u.name AS u_name, u.is_superuser AS u_is_superuser, u.created_at AS u_created_at,
                o.name AS o_name, o.tier AS o_tier, o.kind AS o_kind, o.created_at AS o_created_at
           FROM api_keys k JOIN users u ON u.id = k.user_id JOIN organisations o ON o.id = k.org_id
          WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
        [keyHash],
      );
      if (!row) return null;
      return {
        key: toKey(row),
        user: toUser({
          id: row.user_id,
          org_id: row.org_id,
          name: row.u_name,
          is_superuser: row.u_is_superuser,
          created_at: row.u_created_at,
        }),
        org: toOrg({
          id: row.org_id,
          name: row.o_name,
          tier: row.o_tier,
          kind: row.o_kind,
          created_at: row.o_created_at,
        }),
      };
    },
    async revokeKey(keyId) {
      const row = await one<KeyRow>(
        'UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2 RETURNING *',
        [new Date().toISOString(), keyId],
      );
      return row ? toKey(row) : null;
    },
    async listKeys(orgId) {
      const { rows } = await pool.query<KeyRow>(
        `SELECT id, org_id, user_id, name, prefix, created_at, revoked_at FROM api_keys
          WHERE org_id = $1 ORDER BY created_at, name, id`,
        [orgId],
      );
      return rows.map(toKey);
    },
    async countOrgs() {
      return (await one<{ n: number }>('SELECT COUNT(*) AS n FROM organisations', []))?.n ?? 0;
    },
  };
}
