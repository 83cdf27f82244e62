import { createUrlSigner } from '../../../src/lib/url-signer';

describe('url signer', () => {
  const signer = createUrlSigner('s'.repeat(32));

  it('accepts its own signature before expiry only', () => {
    const q = signer.sign('GET', '/v1/files/a/content', 1000);
    expect(signer.verify('GET', '/v1/files/a/content', q, 999)).toBe(true);
    expect(signer.verify('GET', '/v1/files/a/content', q, 1000)).toBe(false);
  });

  it('binds the method, path and expiry', () => {
    const q = signer.sign('GET', '/v1/files/a/content', 1000);
    expect(signer.verify('PUT', '/v1/files/a/content', q, 1)).toBe(false);
    expect(signer.verify('GET', '/v1/files/b/content', q, 1)).toBe(false);
    expect(signer.verify('GET', '/v1/files/a/content', { ...q, expires: 2000 }, 1)).toBe(false);
    expect(signer.verify('GET', '/v1/files/a/content', { expires: '1000' }, 1)).toBe(false);
  });

  it('rejects another secret', () => {
    const other = createUrlSigner('t'.repeat(32));
    expect(other.verify('GET', '/p', signer.sign('GET', '/p', 10), 1)).toBe(false);
  });

  it('writes the query into a path', () => {
    expect(signer.signedPath('GET', '/p', 10.7)).toMatch(/^\/p\?expires=10&signature=[0-9a-f]{64}$/);
  });
});
