import { randomHex } from '../../../src/lib/random-id';

describe('randomHex', () => {
  it('draws lowercase hex of the asked length, never the same twice across pool refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2_000; i += 1) {
      const id = randomHex(12);
      expect(id).toMatch(/^[0-9a-f]{24}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(2_000); // 24 KB drawn: the 4 KiB pool was refilled several times
    expect(randomHex(256)).toHaveLength(512);
    expect(() => randomHex(257)).toThrow(RangeError);
  });
});
