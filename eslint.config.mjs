// Lint: type-aware rules plus the dependency rules of DESIGN.md §3, written as import bans per folder.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// One config block per layer: in `files`, importing anything matching `patterns` is an error that says `why`.
const layerBan = (files, patterns, why) => ({
  files,
  rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [{ group: patterns, message: why }] }] },
});
// Transports and the SQLite driver: services, the gateway and engines never import them.
const transports = ['express', 'ws', 'better-sqlite3', '@modelcontextprotocol/*'];
// The composition root (src/container): the gateway and engines never reach it.
const container = ['**/container', '**/container/**'];

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
  layerBan(
    ['src/http/**', 'src/mcp/**', 'src/ws/**'],
    ['**/stores/sqlite/**', 'better-sqlite3', '**/engines/*/**', '**/blobs/fs*'],
    'Adapters call services, never SQL, files or engines.',
  ),
  layerBan(
    ['src/services/**'],
    [...transports, '**/stores/sqlite/**', '**/engines/*/**', '**/http/**', '**/blobs/fs*'],
    'Services depend on interfaces only (DESIGN.md §3).',
  ),
  layerBan(
    ['src/gateway/**'],
    [...transports, '**/stores/sqlite/**', '**/http/**', '**/mcp/**', '**/ws/**', ...container, '**/blobs/fs*'],
    'The gateway is not an adapter: it depends on interfaces, never on SQL, transports or the container.',
  ),
  layerBan(
    ['src/engines/**'],
    [
      ...transports,
      '**/services/**',
      '**/gateway/**',
      '**/http/**',
      '**/mcp/**',
      '**/ws/**',
      '**/agents/**',
      '**/stores/**',
      ...container,
      '**/blobs/**',
    ],
    'Engines are leaves: they import domain/, lib/ and each other only.',
  ),
  layerBan(
    ['src/domain/**', 'src/lib/**'],
    ['../*'],
    'domain/ and lib/ are leaves: they import nothing else from src.',
  ),
  layerBan(
    ['tools/**', 'agent-graphs/**'],
    ['../src/*', '!../src/agents', '!../src/agents/sdk'],
    'Plugins import src/agents/sdk only.',
  ),
);
