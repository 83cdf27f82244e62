#!/usr/bin/env node
// The `prism` command: runs the TypeScript CLI directly (bin/register-ts.js), so a checkout needs no build step.
require('./register-ts.js');
const { run } = require('../src/cli/main.ts');

run(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error) => {
    console.error(error);
    process.exitCode = 1;
  },
);
