/**
 * What the accounts and auth services may ask of persistence about organisations, users and API keys.
 */
import type { ApiKeyRecord, Organisation, OrganisationKind, Tier, User } from '../../domain/account';

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
  /** Every key of an organisation, revoked ones included, oldest first (never the hash). */
  listKeys(orgId: string): Promise<ApiKeyRecord[]>;
  countOrgs(): Promise<number>;
}
