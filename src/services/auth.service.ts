/**
 * Authentication: turns an Authorization header into a Principal.
 *
 * Anonymous is no header, `Bearer ` with nothing after it, or the sentinel `Bearer prism`. Any other credential
 * must match an active key; an unknown one is rejected and never treated as anonymous. When the key store cannot
 * answer, the caller gets 503 with Retry-After, so clients retry instead of replacing a good key.
 */
import type { OrgPrincipal, Principal } from '../domain/account';
import { InvalidApiKeyError, ServiceUnavailableError } from '../domain/errors';
import type { Logger } from '../lib/logger';
import type { AccountStore } from '../stores/types';

export const ANONYMOUS_SENTINEL = 'prism';
const LOOKUP_RETRY_AFTER_S = 5;

/** Which surface a request arrived on: single-user mode maps anonymous to the owner on `main` only. */
export type Surface = 'main' | 'gateway';

export interface AuthServiceDeps {
  accounts: AccountStore;
  hashKey: (key: string) => string;
  /** The owner principal when single-user mode is on; null otherwise. */
  singleUserOwner: () => Promise<OrgPrincipal | null>;
  logger: Logger;
  /** @throws InvalidApiKeyError when an active key is refused by its policy (expired, docs/admin.md). */
  refuseKey?: (keyId: string) => Promise<void>;
}

export interface AuthService {
  /**
   * @param authorization the raw header value, if any
   * @throws InvalidApiKeyError for an unknown key; ServiceUnavailableError when keys cannot be looked up.
   */
  authenticate(authorization: string | undefined, context: { clientIp: string; surface: Surface }): Promise<Principal>;
}

/** Most key hashes remembered; beyond it the oldest is forgotten (and hashed again when next seen). */
const KEY_HASH_CACHE_ENTRIES = 10_000;

export function createAuthService(deps: AuthServiceDeps): AuthService {
  // A SHA-256 per call is a measurable part of a gateway call's CPU; a key that matched once is hashed once.
  // Only keys that matched are remembered, so random guesses cannot fill the map.
  const knownKeyHashes = new Map<string, string>();
  const hashOf = (credential: string): string => knownKeyHashes.get(credential) ?? deps.hashKey(credential);
  const remember = (credential: string, hash: string): void => {
    if (knownKeyHashes.has(credential)) return;
    if (knownKeyHashes.size >= KEY_HASH_CACHE_ENTRIES) {
      knownKeyHashes.delete(knownKeyHashes.keys().next().value as string);
    }
    knownKeyHashes.set(credential, hash);
  };
  return {
    async authenticate(authorization, { clientIp, surface }) {
      const credential = parseCredential(authorization);
      if (credential === null) {
        const owner = surface === 'main' ? await deps.singleUserOwner() : null;
        return owner ?? { kind: 'anonymous', clientIp };
      }
      const hash = hashOf(credential);
      let found;
      try {
        found = await deps.accounts.findKeyOwner(hash);
        if (found && deps.refuseKey) await deps.refuseKey(found.key.id);
      } catch (error) {
        if (error instanceof InvalidApiKeyError) throw error;
        deps.logger.error('api key lookup failed', { error: String(error) });
        throw new ServiceUnavailableError(
          'API key lookup is temporarily unavailable. Please retry.',
          'auth_unavailable',
          LOOKUP_RETRY_AFTER_S,
        );
      }
      if (!found) throw new InvalidApiKeyError();
      remember(credential, hash);
      return {
        kind: 'user',
        orgId: found.org.id,
        userId: found.user.id,
        keyId: found.key.id,
        tier: found.org.tier,
        isSuperuser: found.user.isSuperuser,
      };
    },
  };
}

/** The credential of an Authorization header, or null for the anonymous forms. */
export function parseCredential(header: string | undefined): string | null {
  if (header === undefined) return null;
  const trimmed = header.trim();
  if (trimmed === '') return null;
  const match = /^bearer(?:\s+(.*))?$/i.exec(trimmed);
  if (!match) return trimmed;
  const token = (match[1] ?? '').trim();
  return token === '' || token === ANONYMOUS_SENTINEL ? null : token;
}
