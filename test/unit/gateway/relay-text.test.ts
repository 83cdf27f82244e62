/**
 * The text readers of the streamed relay against JSON.parse: what they read and change must be what a parse, an
 * edit and a serialisation would have read and changed, on compact and spaced chunks and on values that mimic keys.
 */
import {
  carriesUsage,
  chunkId,
  contentChars,
  relabelModel,
  withoutNullUsage,
} from '../../../src/gateway/upstream/relay-text';

const compact = JSON.stringify({
  id: 'c1',
  model: 'up-model',
  choices: [{ index: 0, delta: { content: 'a "model": "x" \\ é 😀' }, finish_reason: null }],
  usage: null,
});
const spaced = JSON.stringify(JSON.parse(compact), null, 1).replace(/\n/g, '');

describe('relay text', () => {
  it('relabels the top-level model only, in compact and spaced chunks', () => {
    for (const text of [compact, spaced]) {
      const relabelled = relabelModel(text, JSON.stringify('prism-x'));
      expect(JSON.parse(relabelled as string)).toEqual({ ...JSON.parse(text), model: 'prism-x' });
    }
    expect(relabelModel('{"id":"a","choices":[]}', '"m"')).toBeNull();
    expect(relabelModel('{"model":null}', '"m"')).toBeNull();
  });

  it('counts content characters as JSON.parse would', () => {
    for (const text of [compact, spaced]) {
      const parsed = JSON.parse(text) as { choices: { delta: { content: string } }[] };
      expect(contentChars(text)).toBe(parsed.choices[0]?.delta.content.length);
    }
    expect(contentChars('{"choices":[{"delta":{"content":null}},{"delta":{"content":"ab\\u00e9"}}]}')).toBe(3);
  });

  it('finds a usage object, not a null usage or a usage in text', () => {
    expect(carriesUsage(compact)).toBe(false);
    expect(carriesUsage('{"choices":[],"usage":{"prompt_tokens":1}}')).toBe(true);
    expect(carriesUsage('{"choices":[],"usage" : {"prompt_tokens":1}}')).toBe(true);
    expect(carriesUsage('{"choices":[{"delta":{"content":"\\"usage\\":{"}}]}')).toBe(false);
  });

  it('drops a null usage member wherever it stands, leaving valid JSON', () => {
    for (const text of [compact, spaced, '{"usage":null,"id":"a"}', '{"usage": null}', '{"id":"a", "usage" : null }']) {
      const parsed = JSON.parse(text) as Record<string, unknown>;
      delete parsed.usage;
      expect(JSON.parse(withoutNullUsage(text))).toEqual(parsed);
    }
    expect(withoutNullUsage('{"usage":{"a":1}}')).toBe('{"usage":{"a":1}}');
  });

  it('reads the chunk id', () => {
    expect(chunkId(spaced)).toBe('c1');
    expect(chunkId('{"id":"a\\"b"}')).toBe('a"b');
    expect(chunkId('{"choices":[]}')).toBeNull();
  });
});
