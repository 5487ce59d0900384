// The fault matrix (npm run test:faults): long, so not a `test` target of `npm test`; .ci/run runs it after.
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'faults',
  rootDir: __dirname,
  testMatch: ['**/*.faults-spec.ts'],
};
