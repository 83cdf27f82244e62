/**
 * The schema hash must equal the open-source hub's: sha256 of `json.dumps(schema, sort_keys=True)`, 8 hex chars.
 */
import { createHash } from 'node:crypto';
import { schemaHash, sortedJson } from '../../../src/lib/schema-hash';

describe('schema hash', () => {
  it('serialises like Python json.dumps(sort_keys=True)', () => {
    expect(sortedJson({ b: [1, 'x', null], a: { d: true, c: 1.5 } })).toBe(
      '{"a": {"c": 1.5, "d": true}, "b": [1, "x", null]}',
    );
  });
  it('is the first 8 hex characters of the sha256 of that text, independent of key order', () => {
    const text = '{"properties": {"total": {"type": "number"}}, "type": "object"}';
    const expected = createHash('sha256').update(text).digest('hex').slice(0, 8);
    expect(schemaHash({ type: 'object', properties: { total: { type: 'number' } } })).toBe(expected);
    expect(schemaHash({ properties: { total: { type: 'number' } }, type: 'object' })).toBe(expected);
  });
});
