import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { extend } from '../../../src/lib/extend';

describe('extend', () => {
  it('gives what a spread gives: the same keys in the same order, later fields winning, the base untouched', () => {
    const base = JSON.parse('{"model":"a","messages":[],"stream":false}') as Record<string, unknown>;
    const copy = extend(base, { model: 'b', stream_options: { include_usage: true } });
    expect(JSON.stringify(copy)).toBe(JSON.stringify({ ...base, model: 'b', stream_options: { include_usage: true } }));
    expect(copy.messages).toBe(base.messages);
    expect(base).toEqual({ model: 'a', messages: [], stream: false });
  });

  it('keeps an own "__proto__" key of a parsed body as data, as a spread does, and never sets a prototype', () => {
    const base = JSON.parse('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
    const copy = extend(base, { b: 2 });
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect((copy as { polluted?: unknown }).polluted).toBeUndefined();
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"polluted":true},"a":1,"b":2}');
  });

  it('keeps one hidden class across calls once optimised (why it exists; checked by V8 itself)', () => {
    const script = `
      const { extend } = require(${JSON.stringify(path.resolve(__dirname, '../../../src/lib/extend.ts'))});
      const text = '{"model":"a","messages":[{"role":"user","content":"hi"}]}';
      let first, last;
      for (let i = 0; i < 100000; i += 1) {
        const copy = extend(JSON.parse(text), { model: 'b', stream: true, stream_options: { include_usage: true } });
        if (i === 99998) first = copy;
        if (i === 99999) last = copy;
      }
      process.stdout.write(String(%HaveSameMap(first, last)));
    `;
    const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--require', 'tsx/cjs', '-e', script], {
      encoding: 'utf8',
    });
    expect(out).toBe('true');
  });
});
