// Jest runs TypeScript through ts-jest in transpile-only mode (tsc checks types separately in `npm run check`).
/** @type {import('jest').Config} */
const transform = { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] };

module.exports = {
  // A bound, not a speed check: OCR-heavy cases take tens of seconds when the 2-core CI machine is busy.
  testTimeout: 90000,
  // Suites run in a worker process that is replaced once it holds more than this after a file: in one process the
  // whole suite on the shared backends outgrew V8's 4 GB heap (test files leave module graphs behind).
  workerIdleMemoryLimit: '1536MB',
  projects: [
    {
      displayName: 'unit',
      testEnvironment: '<rootDir>/test/helpers/native-realm.environment.js',
      transform,
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
    },
    {
      displayName: 'int',
      testEnvironment: '<rootDir>/test/helpers/native-realm.environment.js',
      transform,
      testMatch: ['<rootDir>/test/integration/**/*.test.ts', '<rootDir>/test/contract/**/*.test.ts'],
    },
  ],
};
