/**
 * Who pays for a metered call: the one rule behind every adapter's gateway call (HTTP, the fast lane, the decision
 * socket, an agent's speech tool). A caller with an API key (or the single-user owner) pays from its organisation's
 * wallet; a guest pays from no wallet and is capped by address and browser fingerprint instead (guest-spend.ts).
 */
import type { Principal } from '../domain/account';
import type { Payer } from './billing';

export interface PayerOptions {
  /** `X-Prism-Fingerprint` of guests, for the daily guest cap (null when none was sent). */
  fingerprint?: string | null;
  /**
   * Whether the payer names the API key, so that key's own budget (src/services/admin) counts the call (the
   * default: every paid call names it; decisions' wallet payer does not, its budgets are held apart in slices).
   */
  namingKey?: boolean;
}

export function payerOf(principal: Principal, options: PayerOptions = {}): Payer {
  if (principal.kind === 'user') {
    return options.namingKey === false
      ? { kind: 'org', orgId: principal.orgId }
      : { kind: 'org', orgId: principal.orgId, keyId: principal.keyId };
  }
  return { kind: 'guest', clientIp: principal.clientIp, fingerprint: options.fingerprint ?? null };
}
