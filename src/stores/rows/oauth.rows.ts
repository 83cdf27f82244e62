/**
 * The oauth tables' rows as both SQL dialects answer them, and their mapping to domain records: written once,
 * imported by the SQLite and the PostgreSQL stores alike, so neither backend imports the other.
 */
import type { Tier } from '../../domain/account';
import type { OAuthCodeRecord, OAuthRequestRecord, OAuthStore, OAuthTokenRecord } from '../types';

export interface CodeRow {
  grant_id: string;
  client_id: string;
  org_id: string;
  user_id: string;
  key_id: string | null;
  scopes: string;
  resource: string;
  code_challenge: string;
  redirect_uri: string;
  expires_at: number;
}

export interface TokenRow {
  kind: 'access' | 'refresh';
  grant_id: string;
  client_id: string;
  org_id: string;
  user_id: string;
  key_id: string | null;
  scopes: string;
  resource: string;
  expires_at: number;
  revoked_at: number | null;
  tier: Tier;
  is_superuser: number;
}

export interface RequestRow {
  client_id: string;
  csrf_hash: string;
  params_json: string;
  expires_at: number;
}

export const splitScopes = (s: string): string[] => (s === '' ? [] : s.split(' '));

export const toCode = (r: CodeRow): OAuthCodeRecord => ({
  grantId: r.grant_id,
  clientId: r.client_id,
  orgId: r.org_id,
  userId: r.user_id,
  keyId: r.key_id,
  scopes: splitScopes(r.scopes),
  resource: r.resource,
  codeChallenge: r.code_challenge,
  redirectUri: r.redirect_uri,
  expiresAt: r.expires_at,
});

export const toToken = (r: TokenRow): OAuthTokenRecord & { revoked: boolean } => ({
  kind: r.kind,
  grantId: r.grant_id,
  clientId: r.client_id,
  orgId: r.org_id,
  userId: r.user_id,
  keyId: r.key_id,
  scopes: splitScopes(r.scopes),
  resource: r.resource,
  expiresAt: r.expires_at,
  tier: r.tier,
  isSuperuser: r.is_superuser === 1,
  revoked: r.revoked_at !== null,
});

export const toRequest = (r: RequestRow): OAuthRequestRecord => ({
  clientId: r.client_id,
  csrfHash: r.csrf_hash,
  params: JSON.parse(r.params_json) as OAuthRequestRecord['params'],
  expiresAt: r.expires_at,
});

/** The values of an `oauth_codes` insert, in column order (code_hash, grant_id, … expires_at). */
export const codeValues = (codeHash: string, r: OAuthCodeRecord): unknown[] => [
  codeHash,
  r.grantId,
  r.clientId,
  r.orgId,
  r.userId,
  r.keyId,
  r.scopes.join(' '),
  r.resource,
  r.codeChallenge,
  r.redirectUri,
  r.expiresAt,
];

/** The values of an `oauth_tokens` insert, in column order (token_hash, kind, … expires_at). */
export const tokenValues = (t: Parameters<OAuthStore['insertTokens']>[0][number]): unknown[] => [
  t.tokenHash,
  t.kind,
  t.grantId,
  t.clientId,
  t.orgId,
  t.userId,
  t.keyId,
  t.scopes.join(' '),
  t.resource,
  t.expiresAt,
];

/** Expired rows are kept this long past their time (a late replay of a refresh token is still recognised). */
export const TOKEN_KEEP_S = 7 * 24 * 3600;
