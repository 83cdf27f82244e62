// Lint: type-aware rules plus the dependency rules of docs/architecture.md, written as import bans per folder.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// One config block per layer: in `files`, importing anything matching `patterns` is an error that says `why`.
const layerBan = (files, patterns, why) => ({
  files,
  rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [{ group: patterns, message: why }] }] },
});
// Transports and the backend's drivers (databases, Redis, S3): services, the gateway and engines never import them.
const drivers = ['better-sqlite3', 'pg', 'ioredis', 'bullmq', '@aws-sdk/*'];
const transports = ['express', 'ws', ...drivers, '@modelcontextprotocol/*'];
// The backend (src/backend: the seam and one room per technology): only the container and the CLI reach into it.
const backend = ['**/backend', '**/backend/**'];
// The composition root (src/container): the gateway and engines never reach it.
const container = ['**/container', '**/container/**'];
// The plugins (tools/, agent-graphs/ at the top): registered by the composition root and injected, never imported
// by src/. Written by depth, since src/mcp/tools/ is not the plugins' folder.
const plugins = [
  '**/agent-graphs',
  '**/agent-graphs/**',
  ...['../..', '../../..', '../../../..'].map((up) => `${up}/tools`),
];
// An adapter calls services and renders src/wire; it never imports another adapter (nor SQL, files or engines).
const adapterBan = (folder, otherAdapters) =>
  layerBan(
    [`${folder}/**`],
    [...backend, ...drivers, '**/engines/*/**', ...otherAdapters, ...plugins, ...container],
    'Adapters call services and share only src/wire: never another adapter, the container, SQL, files, engines or plugins.',
  );

export default tseslint.config(
  // test/openapi-client is compiled by its test against types generated at run time (not in the repository).
  { ignores: ['node_modules/**', 'dist/**', 'data/**', 'coverage/**', '.cache/**', 'test/openapi-client/**'] },
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
    files: ['src/config/**', 'test/**', 'bench/**', 'bin/**', 'scripts/**', 'docs/examples/**'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    files: ['server.ts', 'src/cli/**', 'test/**', 'bench/**', 'bin/**', 'scripts/**', 'docs/examples/**'],
    rules: { 'no-console': 'off' },
  },
  adapterBan('src/http', ['**/mcp/**', '**/ws/**']),
  adapterBan('src/mcp', ['**/http/**', '**/ws/**']),
  adapterBan('src/ws', ['**/http/**', '**/mcp/**']),
  layerBan(
    ['src/wire/**'],
    [...transports, ...backend, '**/http/**', '**/mcp/**', '**/ws/**', ...container],
    'The wire contract (schemas, to-wire mappers, validation, error body) is shared by the adapters and belongs to none.',
  ),
  layerBan(
    ['src/metering/**'],
    [
      ...transports,
      ...backend,
      '**/services/**',
      '**/gateway/**',
      '**/agents/**',
      '**/engines/**',
      '**/wire/**',
      '**/http/**',
      '**/mcp/**',
      '**/ws/**',
      ...container,
    ],
    'Metering sits below the services and the gateway: it imports domain/, lib/ and store interfaces only.',
  ),
  layerBan(
    ['src/services/**'],
    [...transports, ...backend, '**/engines/*/**', '**/http/**', '**/mcp/**', '**/wire/**', ...plugins],
    'Services depend on interfaces only (docs/architecture.md).',
  ),
  layerBan(
    ['src/gateway/**'],
    [...transports, ...backend, '**/http/**', '**/mcp/**', '**/ws/**', '**/wire/**', ...container, ...plugins],
    'The gateway is not an adapter: it depends on interfaces, never on SQL, transports or the container.',
  ),
  layerBan(
    ['src/agents/**'],
    [
      ...transports,
      '**/backend/*/**',
      '**/services/**',
      '**/gateway/**',
      '**/metering/**',
      '**/wire/**',
      '**/http/**',
      '**/mcp/**',
      '**/ws/**',
      ...container,
      ...plugins,
    ],
    'The agent runtime sees ports only; its graphs and tools are handed in by the composition root.',
  ),
  layerBan(
    ['src/engines/**'],
    [
      ...transports,
      '**/services/**',
      '**/gateway/**',
      '**/metering/**',
      '**/wire/**',
      '**/http/**',
      '**/mcp/**',
      '**/ws/**',
      '**/agents/**',
      '**/stores/**',
      ...container,
      '**/blobs/**',
      ...backend,
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
