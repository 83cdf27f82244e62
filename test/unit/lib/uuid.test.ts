import { randomUUID } from 'node:crypto';
import { isUuid } from '../../../src/lib/uuid';

describe('isUuid', () => {
  it('accepts UUIDs in either case', () => {
    const id = randomUUID();
    expect(isUuid(id)).toBe(true);
    expect(isUuid(id.toUpperCase())).toBe(true);
    expect(isUuid('00000000-0000-0000-0000-000000000000')).toBe(true);
  });

  it('rejects names, partial ids and ids with extra text', () => {
    const id = randomUUID();
    expect(isUuid('invoice-skill')).toBe(false);
    expect(isUuid('')).toBe(false);
    expect(isUuid(id.slice(0, -1))).toBe(false);
    expect(isUuid(`${id}x`)).toBe(false);
    expect(isUuid(` ${id}`)).toBe(false);
    expect(isUuid(id.replace(/-/g, ''))).toBe(false);
    expect(isUuid('g0000000-0000-0000-0000-000000000000')).toBe(false);
  });
});
