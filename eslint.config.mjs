import nx from '@nx/eslint-plugin';
import jest from 'eslint-plugin-jest';
import prettier from 'eslint-config-prettier';

/**
 * Lint rules. Module boundaries are real: every project has a `type:` and a `scope:` tag
 * (see docs/architecture.md) and @nx/enforce-module-boundaries checks both on every import.
 */
const typeConstraints = [
  { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:feature', 'type:domain', 'type:data-access', 'type:adapter', 'type:workflow', 'type:platform', 'type:testing', 'type:sdk'] },
  { sourceTag: 'type:feature', onlyDependOnLibsWithTags: ['type:feature', 'type:domain', 'type:data-access', 'type:adapter', 'type:platform', 'type:workflow', 'type:testing', 'type:sdk'] },
  { sourceTag: 'type:data-access', onlyDependOnLibsWithTags: ['type:domain', 'type:platform', 'type:testing'] },
  { sourceTag: 'type:adapter', onlyDependOnLibsWithTags: ['type:domain', 'type:platform'] },
  { sourceTag: 'type:platform', onlyDependOnLibsWithTags: ['type:domain', 'type:platform'] },
  { sourceTag: 'type:contracts', onlyDependOnLibsWithTags: ['type:domain'] },
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
  { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:feature', 'type:domain', 'type:data-access', 'type:adapter', 'type:platform', 'type:workflow'] },
];

const scopeConstraints = [
  { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared', 'type:domain'] },
  { sourceTag: 'scope:control-plane', onlyDependOnLibsWithTags: ['scope:shared', 'scope:control-plane', 'scope:work'] },
  { sourceTag: 'scope:work', onlyDependOnLibsWithTags: ['scope:shared', 'scope:work'] },
  { sourceTag: 'scope:files', onlyDependOnLibsWithTags: ['scope:shared', 'scope:files', 'scope:control-plane'] },
  { sourceTag: 'scope:orchestration', onlyDependOnLibsWithTags: ['scope:shared', 'scope:orchestration', 'scope:control-plane', 'scope:work'] },
  { sourceTag: 'scope:worker', onlyDependOnLibsWithTags: ['scope:shared', 'scope:worker', 'scope:work'] },
  { sourceTag: 'scope:app', onlyDependOnLibsWithTags: ['scope:shared', 'scope:control-plane', 'scope:work', 'scope:files', 'scope:orchestration', 'scope:worker'] },
];

export default [
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  { ignores: ['**/node_modules/**', 'libs/sdk/typescript/src/generated/**', '**/dist/**', '.nx/**', 'tmp/**', '**/*.js', '**/*.mjs', 'docs/**'] },
  {
    files: ['**/*.ts', '**/*.tsx'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          banTransitiveDependencies: false,
          allow: [],
          depConstraints: [...typeConstraints, ...scopeConstraints],
        },
      ],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-inferrable-types': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: "MemberExpression[object.name='process'][property.name='env']", message: 'Only @mango/platform-config reads process.env (and tests).' }],
    },
  },
  {
    files: ['libs/platform/config/src/**/*.ts', '**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts', 'libs/testing/**/*.ts', 'tools/**/*.ts', 'apps/*/test/**/*.ts'],
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
