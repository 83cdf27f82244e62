/**
 * Runs Prism's TypeScript sources directly (`node -r ./bin/register-ts.js server.ts`), so a checkout needs no build
 * step, without the per-request cost that running them through tsx adds.
 *
 * Measured under the gateway benchmark's load with two servers side by side (same code, same load, same moment):
 * through tsx a chat call cost ~30-40% more gateway CPU (e.g. 469 vs 331 us) and promoted ~3 MB per 1,000 calls to
 * V8's old generation against ~30 KB here, which brings full collections into the tail. Part of it is esbuild's
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

const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
const esbuild = require('esbuild');

const tsconfig = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'tsconfig.json'), 'utf8'));
const options = {
  loader: 'ts',
  format: 'cjs',
  platform: 'node',
  target: `node${process.versions.node}`,
  sourcemap: 'inline',
  keepNames: false,
  tsconfigRaw: { compilerOptions: tsconfig.compilerOptions },
};

process.setSourceMapsEnabled(true);

Module._extensions['.ts'] = function compileTypeScript(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const { code } = esbuild.transformSync(source, { ...options, sourcefile: filename });
  module._compile(code, filename);
};
