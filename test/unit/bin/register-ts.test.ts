/**
 * bin/register-ts.js is how `npm start` and the `prism` command run the TypeScript sources. These tests run it the
 * way they do (a child `node -r`) on a small TypeScript file: types are stripped, named closures are left as
 * written (no `__name` wrapper, the per-call cost the loader exists to avoid), and stack traces point at the
 * TypeScript line.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
const LOADER = path.join(ROOT, 'bin', 'register-ts.js');

function runTs(source: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-register-ts-'));
  try {
    const file = path.join(dir, 'sample.ts');
    fs.writeFileSync(file, source);
    return execFileSync(process.execPath, ['-r', LOADER, file], { cwd: ROOT, encoding: 'utf8' });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('bin/register-ts.js', () => {
  it('runs TypeScript with its types stripped and its imports resolved', () => {
    const out = runTs(
      [
        "import path from 'node:path';",
        'interface Point { x: number; y: number }',
        'const norm = (p: Point): number => Math.hypot(p.x, p.y);',
        "console.log(norm({ x: 3, y: 4 }), path.basename('/a/b.ts'));",
      ].join('\n'),
    );
    expect(out.trim()).toBe('5 b.ts');
  });

  it('leaves a named closure as written: no __name wrapper per closure created', () => {
    const out = runTs(
      [
        'function makeCounter(start: number) {',
        '  const next = (): number => (start += 1);',
        '  return next;',
        '}',
        'const counter = makeCounter(1);',
        "console.log(counter.name, String(makeCounter).includes('__name'), counter());",
      ].join('\n'),
    );
    expect(out.trim()).toBe('next false 2');
  });

  it('keeps what it compiled in node_modules/.cache, where the next start reads it instead of compiling again', () => {
    const marker = `cache-marker-${process.pid}-${Date.now()}`;
    const source = `const marker: string = '${marker}';\nconsole.log(marker);`;
    expect(runTs(source).trim()).toBe(marker);
    const cacheDir = path.join(ROOT, 'node_modules', '.cache', 'prism-register-ts');
    const entries = fs.readdirSync(cacheDir).filter((name) => name.endsWith('.js'));
    const hit = entries.find((name) => fs.readFileSync(path.join(cacheDir, name), 'utf8').includes(marker));
    expect(hit).toBeDefined();
    expect(fs.readFileSync(path.join(cacheDir, hit as string), 'utf8')).not.toContain(': string');
    expect(runTs(source).trim()).toBe(marker);
    fs.rmSync(path.join(cacheDir, hit as string));
  });

  it('reports errors at their TypeScript line', () => {
    const out = runTs(
      [
        'type Reason = string;',
        'function fail(reason: Reason): never {',
        '  throw new Error(reason);',
        '}',
        'try {',
        "  fail('boom');",
        '} catch (error) {',
        "  console.log(((error as Error).stack ?? '').split('\\n')[1]);",
        '}',
      ].join('\n'),
    );
    expect(out).toMatch(/sample\.ts:3:\d+/);
  });
});
