/**
 * The accounts tables' rows as both SQL dialects answer them, and their mapping to domain records: written once,
 * imported by the SQLite and the PostgreSQL stores alike, so neither backend imports the other.
 */
import type { ApiKeyRecord, Organisation, OrganisationKind, Tier, User } from '../../domain/account';

export interface OrgRow {
  id: string;
  name: string;
  tier: Tier;
  kind: OrganisationKind;
  created_at: string;
}

export interface UserRow {
  id: string;
  org_id: string;
  name: string;
  is_superuser: number;
  created_at: string;
}

export interface KeyRow {
  id: string;
  org_id: string;
  user_id: string;
  name: string;
  prefix: string;
  created_at: string;
  revoked_at: string | null;
}

export const toOrg = (r: OrgRow): Organisation => ({
  id: r.id,
  name: r.name,
  tier: r.tier,
  kind: r.kind,
  createdAt: new Date(r.created_at),
});

export const toUser = (r: UserRow): User => ({
  id: r.id,
  orgId: r.org_id,
  name: r.name,
  isSuperuser: r.is_superuser === 1,
  createdAt: new Date(r.created_at),
});

export const toKey = (r: KeyRow): ApiKeyRecord => ({
  id: r.id,
  orgId: r.org_id,
  userId: r.user_id,
  name: r.name,
  prefix: r.prefix,
  createdAt: new Date(r.created_at),
  revokedAt: r.revoked_at ? new Date(r.revoked_at) : null,
});
