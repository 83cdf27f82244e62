// Lint: type-aware rules plus the dependency rules of DESIGN.md §3, written as import bans per folder.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const banned = (patterns, message) => ({ group: patterns, message });

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', '*.mjs', 'bin/*.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      curly: ['error', 'multi-line'],
      'no-console': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Only src/config reads process.env.' },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['src/config/**', 'test/**', 'bench/**', 'bin/**', 'scripts/**'],
    rules: { 'no-restricted-properties': 'off' },
  },
  { files: ['server.ts', 'src/cli/**', 'test/**', 'bench/**', 'bin/**', 'scripts/**'], rules: { 'no-console': 'off' } },
  {
    files: ['src/http/**', 'src/mcp/**', 'src/ws/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            banned(
              ['**/stores/sqlite/**', 'better-sqlite3', '**/engines/*/**', '**/blobs/fs*'],
              'Adapters call services, never SQL, files or engines.',
            ),
          ],
        },
      ],
    },
  },
  {
    files: ['src/services/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            banned(
              [
                'express',
                'ws',
                'better-sqlite3',
                '@modelcontextprotocol/*',
                '**/stores/sqlite/**',
                '**/engines/*/**',
                '**/http/**',
                '**/blobs/fs*',
              ],
              'Services depend on interfaces only (DESIGN.md §3).',
            ),
          ],
        },
      ],
    },
  },
  {
    files: ['src/gateway/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            banned(
              [
                'express',
                'ws',
                'better-sqlite3',
                '@modelcontextprotocol/*',
                '**/stores/sqlite/**',
                '**/http/**',
                '**/mcp/**',
                '**/ws/**',
                '**/container',
                '**/container/**',
                '**/blobs/fs*',
              ],
              'The gateway is not an adapter: it depends on interfaces, never on SQL, transports or the container.',
            ),
          ],
        },
      ],
    },
  },
  {
    files: ['src/engines/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            banned(
              [
                'express',
                'ws',
                'better-sqlite3',
                '@modelcontextprotocol/*',
                '**/services/**',
                '**/gateway/**',
                '**/http/**',
                '**/mcp/**',
                '**/ws/**',
                '**/agents/**',
                '**/stores/**',
                '**/container',
                '**/container/**',
                '**/blobs/**',
              ],
              'Engines are leaves: they import domain/, lib/ and each other only.',
            ),
          ],
        },
      ],
    },
  },
  {
    files: ['src/domain/**', 'src/lib/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [banned(['../*'], 'domain/ and lib/ are leaves: they import nothing else from src.')] },
      ],
    },
  },
  {
    files: ['tools/**', 'agent-graphs/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            banned(['../src/*', '!../src/agents', '!../src/agents/sdk'], 'Plugins import src/agents/sdk only.'),
          ],
        },
      ],
    },
  },
);
