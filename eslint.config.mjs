import nx from '@nx/eslint-plugin';
import jest from 'eslint-plugin-jest';
import prettier from 'eslint-config-prettier';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import mango from './tools/lint/rules/index.mjs';

/**
 * Lint rules. Module boundaries are real: every project has a `type:` and a `scope:` tag
 * (see docs/architecture.md and docs/adr/0006-scopes-by-bounded-context.md) and
 * @nx/enforce-module-boundaries checks both on every import. Production code never imports
 * `type:testing`; only test files and tools may (the second boundary block below).
 */
const typeConstraints = (testing) => [
  {
    sourceTag: 'type:app',
    onlyDependOnLibsWithTags: [
      'type:feature',
      'type:domain',
      'type:data-access',
      'type:adapter',
      'type:workflow',
      'type:platform',
      'type:sdk',
      ...testing,
    ],
  },
  {
    sourceTag: 'type:feature',
    onlyDependOnLibsWithTags: [
      'type:feature',
      'type:domain',
      'type:data-access',
      'type:adapter',
      'type:platform',
      'type:workflow',
      'type:sdk',
      ...testing,
    ],
  },
  { sourceTag: 'type:data-access', onlyDependOnLibsWithTags: ['type:domain', 'type:platform', ...testing] },
  { sourceTag: 'type:adapter', onlyDependOnLibsWithTags: ['type:domain', 'type:platform', ...testing] },
  { sourceTag: 'type:platform', onlyDependOnLibsWithTags: ['type:domain', 'type:platform', ...testing] },
  { sourceTag: 'type:sdk', onlyDependOnLibsWithTags: [] },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no I/O, no drivers, no Node built-ins.
    sourceTag: 'type:workflow',
    onlyDependOnLibsWithTags: ['type:domain'],
    allowedExternalImports: ['@temporalio/workflow', '@temporalio/common'],
  },
  {
    // Pure domain code: no framework, driver or I/O.
    sourceTag: 'type:domain',
    onlyDependOnLibsWithTags: ['type:domain'],
    allowedExternalImports: [],
  },
  {
    sourceTag: 'type:testing',
    onlyDependOnLibsWithTags: [
      'type:feature',
      'type:domain',
      'type:data-access',
      'type:adapter',
      'type:platform',
      'type:workflow',
    ],
  },
];

/** Test files and tooling: the only code that may import `libs/testing` (`type:testing`). */
const TEST_FILES = [
  '**/*.spec.ts',
  '**/*.int-spec.ts',
  '**/*.e2e-spec.ts',
  'apps/*/test/**/*.ts',
  'libs/testing/**/*.ts',
  'tools/**/*.ts',
  'deployments/test/**/*.ts',
];

const boundaries = (testing) => [
  'error',
  {
    enforceBuildableLibDependency: false,
    banTransitiveDependencies: false,
    // The item runner loads worker-runtime's Session modules on first use (a healthcheck never needs
    // them: docs/operator-guide.md "Item runner start-up"), while the supervisor imports them statically.
    checkDynamicDependenciesExceptions: ['@mango/worker-runtime'],
    allow: [],
    depConstraints: [...typeConstraints(testing), ...scopeConstraints],
  },
];

const scopeConstraints = [
  { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
  {
    sourceTag: 'scope:control-plane',
    onlyDependOnLibsWithTags: ['scope:shared', 'scope:control-plane', 'scope:work'],
  },
  { sourceTag: 'scope:work', onlyDependOnLibsWithTags: ['scope:shared', 'scope:work'] },
  {
    sourceTag: 'scope:files',
    onlyDependOnLibsWithTags: ['scope:shared', 'scope:files', 'scope:control-plane'],
  },
  {
    sourceTag: 'scope:orchestration',
    onlyDependOnLibsWithTags: ['scope:shared', 'scope:orchestration', 'scope:control-plane', 'scope:work'],
  },
  { sourceTag: 'scope:worker', onlyDependOnLibsWithTags: ['scope:shared', 'scope:worker', 'scope:work'] },
  {
    sourceTag: 'scope:app',
    onlyDependOnLibsWithTags: [
      'scope:shared',
      'scope:control-plane',
      'scope:work',
      'scope:files',
      'scope:orchestration',
      'scope:worker',
    ],
  },
];

export default [
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  {
    ignores: [
      '**/node_modules/**',
      'libs/sdk/typescript/src/generated/**',
      '**/dist/**',
      '.nx/**',
      'tmp/**',
      '**/*.js',
      '**/*.mjs',
      'docs/**',
      'tools/lint/fixtures/**',
    ],
  },
  {
    files: ['**/*.ts', '**/*.tsx'],
    plugins: { 'import-x': importX },
    languageOptions: {
      // Type-aware rules (no-floating-promises) read each file's nearest tsconfig.json.
      parserOptions: {
        // The SDK conformance program runs against the built SDK and belongs to no tsconfig.
        projectService: { allowDefaultProject: ['tools/sdk/conformance/typescript/*.ts', 'tools/db/*.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    settings: {
      'import-x/extensions': ['.ts', '.tsx', '.js'],
      'import-x/external-module-folders': ['node_modules', 'node_modules/@types'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: 'tsconfig.base.json' })],
    },
    rules: {
      '@nx/enforce-module-boundaries': boundaries([]),
      // Value-import cycles inside a project (nx already refuses cycles between projects). Like
      // eslint-plugin-import, import-x skips `import type` edges: tools/lint/import-cycles.spec.ts refuses
      // every circle between files of libs/ and apps/, type-only edges included.
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-inferrable-types': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Only @mango/platform-config reads process.env (and tests).',
        },
      ],
    },
  },
  {
    // SQL and the DataSource only in libs/persistence (ADR 0005), with a shrinking allowlist of the files
    // that had them when the rule came (tools/lint/rules/sql-allowlist.json).
    files: [
      'libs/**/*.ts',
      'libs/**/*.tsx',
      'apps/**/*.ts',
      'apps/**/*.tsx',
      'tools/lint/fixtures/src/**/*.ts',
    ],
    ignores: [
      'libs/persistence/**',
      'libs/testing/**',
      'libs/sdk/**',
      'apps/*/test/**',
      ...TEST_FILES.filter((f) => f.startsWith('**')),
    ],
    plugins: { mango },
    rules: { 'mango/no-sql-outside-persistence': 'error' },
  },
  {
    files: TEST_FILES,
    ignores: ['tools/lint/fixtures/**'],
    rules: { '@nx/enforce-module-boundaries': boundaries(['type:testing']) },
  },
  {
    files: [
      'libs/platform/config/src/**/*.ts',
      '**/*.spec.ts',
      '**/*.int-spec.ts',
      '**/*.e2e-spec.ts',
      'libs/testing/**/*.ts',
      'tools/**/*.ts',
      'apps/*/test/**/*.ts',
      'deployments/test/**/*.ts',
    ],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    files: ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts'],
    plugins: { jest },
    rules: {
      'jest/no-focused-tests': 'error',
      'jest/no-disabled-tests': 'error',
      'jest/valid-expect': 'error',
      'jest/no-done-callback': 'error',
      'jest/no-standalone-expect': 'error',
      'jest/expect-expect': ['error', { assertFunctionNames: ['expect', 'expect*', 'rejects'] }],
    },
  },
  prettier,
];
