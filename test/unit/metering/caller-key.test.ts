import { callerKey, clientAddressKey } from '../../../src/metering/caller-key';

describe('caller key', () => {
  it('keys authenticated callers by user and anonymous ones by address', () => {
    expect(callerKey({ kind: 'user', orgId: 'o', userId: 'u1', keyId: 'k', tier: 'free', isSuperuser: false })).toBe(
      'user:u1',
    );
    expect(callerKey({ kind: 'anonymous', clientIp: '203.0.113.7' })).toBe('ip:203.0.113.7');
  });

  it('buckets IPv6 by /56 and unwraps IPv4-mapped addresses', () => {
    expect(clientAddressKey('2001:db8:1:2a3::1')).toBe('2001:db8:1:200::/56');
    expect(clientAddressKey('2001:db8:1:2ff:ffff::9')).toBe('2001:db8:1:200::/56');
    expect(clientAddressKey('2001:db8:1:300::1')).toBe('2001:db8:1:300::/56');
    expect(clientAddressKey('::1')).toBe('0:0:0:0::/56');
    expect(clientAddressKey('::ffff:10.0.0.1')).toBe('10.0.0.1');
  });
});
