/**
 * Accounts: organisations, their users and API keys, and who is calling.
 *
 * A tier belongs to the organisation (it is the plan that pays); superuser is a property of a user. The
 * `Principal` is what auth resolves a request to, and what every service receives to scope its reads.
 */

export const TIERS = ['free', 'pro', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];

/** `standard` organisations are created by operators; `guest` ones hold anonymous callers' data per client IP. */
export type OrganisationKind = 'standard' | 'guest';

export interface Organisation {
  id: string;
  name: string;
  tier: Tier;
  kind: OrganisationKind;
  createdAt: Date;
}

export interface User {
  id: string;
  orgId: string;
  name: string;
  isSuperuser: boolean;
  createdAt: Date;
}

/** A stored key: only its hash and a short display prefix are kept, never the secret itself. */
export interface ApiKeyRecord {
  id: string;
  orgId: string;
  userId: string;
  name: string;
  prefix: string;
  createdAt: Date;
  revokedAt: Date | null;
}

/** The caller of a request, after authentication. */
export type Principal =
  | { kind: 'user'; orgId: string; userId: string; keyId: string | null; tier: Tier; isSuperuser: boolean }
  | { kind: 'anonymous'; clientIp: string };

/** A principal with an organisation to own what it creates. */
export type OrgPrincipal = Extract<Principal, { kind: 'user' }>;

/**
 * The principal for work done on an organisation's behalf outside a request (batch jobs, resumed runs, evaluation
 * re-runs): scoped to that organisation, no key, no superuser rights. `actor` names the part of Prism doing it.
 */
export function orgWorkPrincipal(orgId: string, actor: string): OrgPrincipal {
  return { kind: 'user', orgId, userId: actor, keyId: null, tier: 'free', isSuperuser: false };
}

/** `principal` naming the API key a piece of work was asked with, so its paid calls count against that key's budget. */
export function withKeyOf(principal: Principal, keyId: string | null | undefined): Principal {
  return keyId && principal.kind === 'user' ? { ...principal, keyId } : principal;
}

/** Tiers allowed to delete stored files (spec: "only for Pro and Enterprise users"). */
export function tierMayDeleteFiles(tier: Tier): boolean {
  return tier === 'pro' || tier === 'enterprise';
}
