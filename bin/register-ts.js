/**
 * Runs Prism's TypeScript sources directly (`node -r ./bin/register-ts.js server.ts`), so a checkout needs no build
 * step, without the per-request cost that running them through tsx adds.
 *
 * Measured under the gateway benchmark's load with two servers side by side (same code, same load, same moment):
 * through tsx a chat call cost ~30-40% more gateway CPU (e.g. 469 vs 331 us) and promoted ~3 MB per 1,000 calls to
 * V8's old generation in every run against ~30 KB here in most runs (about one process in four still enters that
 * state without tsx; see the README's gateway figures), which brings full collections into the tail. Part of it is esbuild's
 * `keepNames`, which tsx always sets: every named closure is wrapped in `__name(fn, "name")`, an
 * `Object.defineProperty` per closure created, and the request path creates several per call (~70 us of the gap
 * when this loader turns it on). The rest comes with tsx's runtime itself; its promotion was the same through
 * `--import tsx` and `-r tsx/cjs`. Names stay as written here anyway: esbuild renames identifiers only when it
 * minifies them, which this loader does not ask for.
 *
 * Each `.ts` file that `require` reaches is compiled to CommonJS by esbuild (the compiler tsx uses too) with the
 * project's tsconfig options and an inline source map, so stack traces name TypeScript lines. ESM-only packages
 * are loaded as before, by the sources' own dynamic `import()`. tsx stays for scripts and benchmarks.
 */
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');

const ROOT = path.join(__dirname, '..');
const tsconfig = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8'));
const options = {
  loader: 'ts',
  format: 'cjs',
  platform: 'node',
  target: `node${process.versions.node}`,
  sourcemap: 'inline',
  keepNames: false,
  tsconfigRaw: { compilerOptions: tsconfig.compilerOptions },
};

/**
 * Compiled files are kept under node_modules/.cache (by a hash of the compiler's version, these options, the path
 * and the source), so a start after the first compiles only what changed and does not load esbuild at all: the
 * `prism` command starts ~1 s sooner. A cache that cannot be written is simply not used. Entries of files since
 * changed are never read again; deleting the folder is always safe.
 */
const CACHE_DIR = path.join(ROOT, 'node_modules', '.cache', 'prism-register-ts');
let esbuild = null;
let salt = null;

function compile(source, filename) {
  salt ??= JSON.stringify([require('esbuild/package.json').version, options]);
  const key = crypto.createHash('sha256').update(salt).update('\0').update(filename).update('\0').update(source);
  const cached = path.join(CACHE_DIR, `${key.digest('hex')}.js`);
  try {
    return fs.readFileSync(cached, 'utf8');
  } catch {
    // not compiled yet
  }
  esbuild ??= require('esbuild');
  const { code } = esbuild.transformSync(source, { ...options, sourcefile: filename });
  try {
    fs.mkdirSync(CACHE_DIR, { recursive: true });
    const partial = `${cached}.${process.pid}.tmp`;
    fs.writeFileSync(partial, code);
    fs.renameSync(partial, cached);
  } catch {
    // read-only or full: run without the cache
  }
  return code;
}

process.setSourceMapsEnabled(true);

Module._extensions['.ts'] = function compileTypeScript(module, filename) {
  module._compile(compile(fs.readFileSync(filename, 'utf8'), filename), filename);
};
