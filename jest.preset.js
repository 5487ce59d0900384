// Shared Jest preset: SWC transform (decorator metadata on), @mango/* aliases from tsconfig.base.json,
// and the three test layers: *.spec.ts (pure), *.int-spec.ts (real services), *.e2e-spec.ts (real processes).
const path = require('node:path');
const { compilerOptions } = require('./tsconfig.base.json');

const moduleNameMapper = {};
for (const [alias, [target]] of Object.entries(compilerOptions.paths)) {
  moduleNameMapper[`^${alias.replace('*', '(.*)')}$`] = path.join(__dirname, target.replace('*', '$1'));
}

module.exports = {
  testEnvironment: 'node',
  testMatch: ['**/?(*.)+(spec|int-spec|e2e-spec).ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper,
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
          target: 'es2022',
        },
        module: { type: 'commonjs' },
        sourceMaps: 'inline',
      },
    ],
  },
  testTimeout: 60_000,
  // Integration suites share one PostgreSQL server; each file gets its own database (see @mango/testing).
  maxWorkers: 1,
};
