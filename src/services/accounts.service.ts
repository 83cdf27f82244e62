/**
 * Accounts: organisations, API keys, credits, the owner bootstrap and guest organisations.
 *
 * Keys are random 192-bit secrets; only their sha256 is stored (a slow hash adds nothing at that entropy), with a
 * short prefix kept for display. The owner bootstrap runs on an empty database so a fresh install has exactly one
 * way in, written to a 0600 file.
 */
import { randomBytes } from 'node:crypto';
import type { ApiKeyRecord, OrgPrincipal, Principal, Tier } from '../domain/account';
import { NotFoundError } from '../domain/errors';
import { sha256Hex } from '../lib/hash';
import type { AccountStore, WalletStore } from '../stores/types';

const OWNER_ORG_NAME = 'owner';
const KEY_PREFIX = 'prism_';

export interface CreatedKey {
  /** The secret, shown once. */
  key: string;
  keyId: string;
  orgId: string;
  orgName: string;
  userId: string;
  tier: Tier;
}

export interface AccountsServiceDeps {
  /** Credit the owner organisation starts with (micro-dollars). */
  ownerCreditsMicros?: number;
  accounts: AccountStore;
  wallets: WalletStore;
  /** Persists the owner key (mode 0600); injected so the service does no file I/O itself. */
  writeOwnerKey: (key: string) => Promise<void>;
}

export interface AccountsService {
  /**
   * Creates the owner organisation, user and key when the database has no organisation yet.
   * @returns the new key when one was created, else null.
   */
  bootstrapOwner(): Promise<CreatedKey | null>;
  /** The owner as a principal, for single-user mode; null if the owner organisation is gone. */
  ownerPrincipal(): Promise<OrgPrincipal | null>;
  /** Creates a key for a new user of `org` (by id or name), creating the organisation if it does not exist. */
  createKey(input: { org: string; tier?: Tier; superuser?: boolean; name?: string }): Promise<CreatedKey>;
  /** @throws NotFoundError when no key has that id. */
  revokeKey(keyId: string): Promise<void>;
  /** The keys of `org` (by id or name), revoked ones included. @throws NotFoundError for an unknown organisation. */
  listKeys(org: string): Promise<{ orgId: string; orgName: string; tier: Tier; keys: ApiKeyRecord[] }>;
  /** An organisation's balance in USD. @throws NotFoundError for an unknown organisation. */
  balance(org: string): Promise<{ orgId: string; orgName: string; balanceUsd: number }>;
  /** Adds USD credit; returns the new balance in USD. @throws NotFoundError for an unknown organisation. */
  addCredits(org: string, usd: number): Promise<{ orgId: string; balanceUsd: number }>;
  /** The organisation that owns what a principal stores: its own, or a per-IP guest organisation. */
  orgIdFor(principal: Principal): Promise<string>;
  /** Hash used to look keys up; exported so auth and key creation agree. */
  hashKey(key: string): string;
}

export function createAccountsService(deps: AccountsServiceDeps): AccountsService {
  const { accounts, wallets } = deps;
  const guestOrgs = new Map<string, string>();
  const hashKey = (key: string): string => sha256Hex(key);

  async function createKey(input: {
    org: string;
    tier?: Tier;
    superuser?: boolean;
    name?: string;
  }): Promise<CreatedKey> {
    let org = await accounts.findOrg(input.org);
    if (!org) {
      org = await accounts.createOrg({ name: input.org, tier: input.tier ?? 'free', kind: 'standard' });
    } else if (input.tier && input.tier !== org.tier) {
      await accounts.setOrgTier(org.id, input.tier);
      org = { ...org, tier: input.tier };
    }
    const name = input.name ?? 'default';
    const user = await accounts.createUser({ orgId: org.id, name, isSuperuser: input.superuser ?? false });
    const key = `${KEY_PREFIX}${randomBytes(24).toString('base64url')}`;
    const record = await accounts.createKey({
      orgId: org.id,
      userId: user.id,
      name,
      keyHash: hashKey(key),
      prefix: key.slice(0, KEY_PREFIX.length + 6),
    });
    return { key, keyId: record.id, orgId: org.id, orgName: org.name, userId: user.id, tier: org.tier };
  }

  return {
    hashKey,
    createKey,

    async bootstrapOwner() {
      if ((await accounts.countOrgs()) > 0) return null;
      const created = await createKey({ org: OWNER_ORG_NAME, tier: 'enterprise', superuser: true, name: 'owner' });
      // The operator's own organisation starts with credit, so local use works before anyone runs `credits add`.
      if (deps.ownerCreditsMicros && deps.ownerCreditsMicros > 0) {
        await wallets.credit(created.orgId, deps.ownerCreditsMicros, 'owner starting credit');
      }
      await deps.writeOwnerKey(created.key);
      return created;
    },

    async ownerPrincipal() {
      const org = await accounts.findOrg(OWNER_ORG_NAME);
      const owner = org ? await accounts.findSuperuser(org.id) : null;
      if (!org || !owner) return null;
      return { kind: 'user', orgId: org.id, userId: owner.id, keyId: null, tier: org.tier, isSuperuser: true };
    },

    async revokeKey(keyId) {
      const revoked = await accounts.revokeKey(keyId);
      if (!revoked) throw new NotFoundError('api_key', keyId);
    },

    async listKeys(orgRef) {
      const org = await accounts.findOrg(orgRef);
      if (!org) throw new NotFoundError('organisation', orgRef);
      return { orgId: org.id, orgName: org.name, tier: org.tier, keys: await accounts.listKeys(org.id) };
    },

    async balance(orgRef) {
      const org = await accounts.findOrg(orgRef);
      if (!org) throw new NotFoundError('organisation', orgRef);
      return { orgId: org.id, orgName: org.name, balanceUsd: (await wallets.balance(org.id)) / 1_000_000 };
    },

    async addCredits(orgRef, usd) {
      const org = await accounts.findOrg(orgRef);
      if (!org) throw new NotFoundError('organisation', orgRef);
      const balance = await wallets.credit(org.id, Math.round(usd * 1_000_000), 'credits added by operator');
      return { orgId: org.id, balanceUsd: balance / 1_000_000 };
    },

    async orgIdFor(principal) {
      if (principal.kind === 'user') return principal.orgId;
      const name = `guest-${sha256Hex(principal.clientIp).slice(0, 16)}`;
      const cached = guestOrgs.get(name);
      if (cached) return cached;
      const org =
        (await accounts.findOrg(name)) ??
        (await accounts.createOrg({ name, tier: 'free', kind: 'guest' }).catch(async (error: unknown) => {
          const raced = await accounts.findOrg(name);
          if (raced) return raced;
          throw error;
        }));
      guestOrgs.set(name, org.id);
      return org.id;
    },
  };
}
