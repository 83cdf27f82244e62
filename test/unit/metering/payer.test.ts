/**
 * Who pays: the one rule every gateway call reaches (src/metering/payer.ts). A key pays from its organisation and is
 * named for its own budget unless the caller says not to; a guest is a guest by address and fingerprint.
 */
import type { Principal } from '../../../src/domain/account';
import { payerOf } from '../../../src/metering/payer';

const user: Principal = {
  kind: 'user',
  orgId: 'org-1',
  userId: 'u-1',
  keyId: 'key-1',
  tier: 'free',
  isSuperuser: false,
};
const guest: Principal = { kind: 'anonymous', clientIp: '10.0.0.7' };

describe('payerOf', () => {
  it('charges a key to its organisation, naming the key unless told not to', () => {
    expect(payerOf(user, { fingerprint: 'fp' })).toEqual({ kind: 'org', orgId: 'org-1', keyId: 'key-1' });
    expect(payerOf(user, { namingKey: false })).toEqual({ kind: 'org', orgId: 'org-1' });
  });

  it('makes an anonymous caller a guest by address and browser fingerprint', () => {
    expect(payerOf(guest, { fingerprint: 'fp-9' })).toEqual({
      kind: 'guest',
      clientIp: '10.0.0.7',
      fingerprint: 'fp-9',
    });
    expect(payerOf(guest)).toEqual({ kind: 'guest', clientIp: '10.0.0.7', fingerprint: null });
  });
});
