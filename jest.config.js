// Jest runs TypeScript through ts-jest in transpile-only mode (tsc checks types separately in `npm run check`).
/** @type {import('jest').Config} */
const transform = { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] };

module.exports = {
  // A bound, not a speed check: OCR-heavy cases take tens of seconds when the 2-core CI machine is busy.
  testTimeout: 90000,
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
