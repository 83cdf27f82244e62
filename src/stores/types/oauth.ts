/**
 * What the MCP OAuth service may ask of persistence: registered clients, consent requests, authorization codes and
 * tokens. Secrets arrive here already hashed (SHA-256 hex); times are Unix seconds.
 */
import type { Tier } from '../../domain/account';

/** What a person approved: which client may act for whom, on which resource, with which scopes. */
export interface OAuthGrant {
  grantId: string;
  clientId: string;
  orgId: string;
  userId: string;
  /** The API key the person signed in with; null when the single-user owner approved. */
  keyId: string | null;
  scopes: string[];
  resource: string;
}

export interface OAuthRequestRecord {
  clientId: string;
  csrfHash: string;
  params: { redirectUri: string; state: string | null; scopes: string[]; codeChallenge: string; resource: string };
  expiresAt: number;
}

export interface OAuthCodeRecord extends OAuthGrant {
  codeChallenge: string;
  redirectUri: string;
  expiresAt: number;
}

/** A live token with what its holder is now: the organisation's current tier, the user's current rights. */
export interface OAuthTokenRecord extends OAuthGrant {
  kind: 'access' | 'refresh';
  expiresAt: number;
  tier: Tier;
  isSuperuser: boolean;
}

export interface OAuthTokenInput extends OAuthGrant {
  tokenHash: string;
  kind: 'access' | 'refresh';
  expiresAt: number;
}

export interface OAuthStore {
  insertClient(clientId: string, info: Record<string, unknown>): Promise<void>;
  getClient(clientId: string): Promise<Record<string, unknown> | null>;
  insertRequest(idHash: string, record: OAuthRequestRecord): Promise<void>;
  /** A request that has not expired, or null. */
  getRequest(idHash: string, now: number): Promise<OAuthRequestRecord | null>;
  /** Removes a request and says whether it was still there (single use: only one caller gets true). */
  takeRequest(idHash: string): Promise<boolean>;
  /** Inserts a code and removes codes and requests past their time. */
  insertCode(codeHash: string, record: OAuthCodeRecord, now: number): Promise<void>;
  /** An unexpired code not yet exchanged, or null. */
  getCode(codeHash: string, now: number): Promise<OAuthCodeRecord | null>;
  /**
   * Marks an unexpired code exchanged and returns it (single use: only one caller gets it). The code is kept,
   * redeemed, until it would have expired, so a replay can be recognised ({@link OAuthStore.redeemedGrant}).
   */
  takeCode(codeHash: string, now: number): Promise<OAuthCodeRecord | null>;
  /** The grant an unexpired, already exchanged code was exchanged for (a replay), or null. */
  redeemedGrant(codeHash: string, now: number): Promise<string | null>;
  insertTokens(tokens: readonly OAuthTokenInput[]): Promise<void>;
  /**
   * An unexpired token of this kind whose sign-in key (if any) is still active, revoked or not (`revoked` says;
   * a rotated refresh token used again must be recognised); null otherwise.
   */
  findToken(
    tokenHash: string,
    kind: 'access' | 'refresh',
    now: number,
  ): Promise<(OAuthTokenRecord & { revoked: boolean }) | null>;
  /** Marks one token revoked; false when it was already revoked or unknown (rotation: only one caller wins). */
  revokeToken(tokenHash: string, now: number): Promise<boolean>;
  /** Revokes every token of a grant. */
  revokeGrant(grantId: string, now: number): Promise<void>;
}
